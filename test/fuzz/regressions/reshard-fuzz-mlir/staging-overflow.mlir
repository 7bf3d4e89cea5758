reshard_rt.plan @staging_overflow num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      reshard_rt.send to 1 bytes 1 staging 9223372036854775807 pack = [0, 0, 0, 1, 0]
    }
  }
}
