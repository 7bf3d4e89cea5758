module attributes {reshard.staging_budget = 32 : i64} {
  reshard_rt.plan @reshard_plan num_ranks = 6 tensors = ["w", "v"] fingerprint = 4595429166162429034 attributes {staging_budget = 32 : i64} {
    reshard_rt.rank 0 workspace = 32 shards = [0, 32, -1, 1, 3, -1] {
      reshard_rt.step 0 {
        reshard_rt.send to 4 bytes 32 staging 0 pack = [0, 0, 0, 32, 0]
      }
      reshard_rt.step 1 {
        reshard_rt.send to 4 bytes 2 staging 0 pack = [1, 0, 1, 2, 0]
      }
    }
    reshard_rt.rank 1 workspace = 48 shards = [0, 24, -1, 1, 2, -1] {
      reshard_rt.step 1 {
        reshard_rt.send to 4 bytes 24 staging 0 pack = [0, 0, 0, 24, 0]
        reshard_rt.send to 5 bytes 2 staging 32 pack = [1, 0, 0, 2, 0]
      }
    }
    reshard_rt.rank 2 workspace = 32 shards = [0, 32, -1, 1, 3, -1] {
      reshard_rt.step 0 {
        reshard_rt.send to 5 bytes 32 staging 0 pack = [0, 0, 0, 32, 0]
      }
      reshard_rt.step 1 {
        reshard_rt.send to 4 bytes 1 staging 0 pack = [1, 0, 0, 1, 0]
      }
    }
    reshard_rt.rank 3 workspace = 32 shards = [0, 24, -1, 1, 2, -1] {
      reshard_rt.step 1 {
        reshard_rt.send to 5 bytes 24 staging 0 pack = [0, 0, 0, 24, 0]
      }
    }
    reshard_rt.rank 4 workspace = 64 shards = [0, -1, 112, 1, -1, 3] {
      reshard_rt.step 0 {
        reshard_rt.recv from 0 bytes 32 staging 0 unpack = [0, 1, 0, 16, 1, 2, 28]
      }
      reshard_rt.step 1 {
        reshard_rt.recv from 0 bytes 2 staging 0 unpack = [1, 1, 1, 2, 0]
        reshard_rt.recv from 1 bytes 24 staging 16 unpack = [0, 1, 16, 12, 1, 2, 28]
        reshard_rt.recv from 2 bytes 1 staging 48 unpack = [1, 1, 0, 1, 0]
      }
      reshard_rt.step 2 {
        reshard_rt.recv from 5 bytes 32 staging 0 unpack = [0, 1, 56, 16, 1, 2, 28]
      }
      reshard_rt.step 3 {
        reshard_rt.send to 5 bytes 32 staging 0 pack = [0, 1, 0, 16, 1, 2, 28]
      }
      reshard_rt.step 4 {
        reshard_rt.recv from 5 bytes 24 staging 0 unpack = [0, 1, 72, 12, 1, 2, 28]
      }
      reshard_rt.step 5 {
        reshard_rt.send to 5 bytes 24 staging 0 pack = [0, 1, 16, 12, 1, 2, 28]
      }
    }
    reshard_rt.rank 5 workspace = 48 shards = [0, -1, 112, 1, -1, 2] {
      reshard_rt.step 0 {
        reshard_rt.recv from 2 bytes 32 staging 0 unpack = [0, 1, 56, 16, 1, 2, 28]
      }
      reshard_rt.step 1 {
        reshard_rt.recv from 1 bytes 2 staging 0 unpack = [1, 1, 0, 2, 0]
        reshard_rt.recv from 3 bytes 24 staging 16 unpack = [0, 1, 72, 12, 1, 2, 28]
      }
      reshard_rt.step 2 {
        reshard_rt.send to 4 bytes 32 staging 0 pack = [0, 1, 56, 16, 1, 2, 28]
      }
      reshard_rt.step 3 {
        reshard_rt.recv from 4 bytes 32 staging 0 unpack = [0, 1, 0, 16, 1, 2, 28]
      }
      reshard_rt.step 4 {
        reshard_rt.send to 4 bytes 24 staging 0 pack = [0, 1, 72, 12, 1, 2, 28]
      }
      reshard_rt.step 5 {
        reshard_rt.recv from 4 bytes 24 staging 0 unpack = [0, 1, 16, 12, 1, 2, 28]
      }
    }
  }
}

