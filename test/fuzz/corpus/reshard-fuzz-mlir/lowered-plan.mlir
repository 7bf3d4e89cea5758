module {
  reshard_rt.plan @reshard_plan num_ranks = 6 tensors = ["w", "v"] fingerprint = 6049275642528055416 staging_budget = 32 max_ops_per_step = 1024 {
    reshard_rt.mesh 0 ranks [0, 1, 2, 3]
    reshard_rt.mesh 1 ranks [4, 5]
    reshard_rt.class 0 element_bytes 4 rank 2 src combos [0, 1, 2, 3] shapes [[2, 4], [2, 3], [2, 4], [2, 3]] dst combos [0, 0] shapes [[4, 7]] {
      reshard_rt.piece dst 0 src 0 size [2, 4] at [0, 0] from [0, 0] pack <+0 run 32> unpack <+0 run 16 x [2 by 28]> copy <+0 -> +0 run 16 x [2 by 16 -> 28]>
      reshard_rt.piece dst 0 src 1 size [2, 3] at [0, 4] from [0, 0] pack <+0 run 24> unpack <+16 run 12 x [2 by 28]> copy <+0 -> +16 run 12 x [2 by 12 -> 28]>
      reshard_rt.piece dst 0 src 2 size [2, 4] at [2, 0] from [0, 0] pack <+0 run 32> unpack <+56 run 16 x [2 by 28]> copy <+0 -> +56 run 16 x [2 by 16 -> 28]>
      reshard_rt.piece dst 0 src 3 size [2, 3] at [2, 4] from [0, 0] pack <+0 run 24> unpack <+72 run 12 x [2 by 28]> copy <+0 -> +72 run 12 x [2 by 12 -> 28]>
    }
    reshard_rt.class 1 element_bytes 1 rank 1 src combos [0, 1, 0, 1] shapes [[3], [2]] dst combos [0, 1] shapes [[3], [2]] {
      reshard_rt.piece dst 0 src 0 size [1] at [0] from [0] pack <+0 run 1> unpack <+0 run 1> copy <+0 -> +0 run 1>
      reshard_rt.piece dst 0 src 0 size [2] at [1] from [1] pack <+1 run 2> unpack <+1 run 2> copy <+1 -> +1 run 2>
      reshard_rt.piece dst 1 src 1 size [2] at [0] from [0] pack <+0 run 2> unpack <+0 run 2> copy <+0 -> +0 run 2>
    }
    reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
    reshard_rt.group 1 class 1 from 0 to 1 tensors [1]
    reshard_rt.items 0 [g0.p0[0], g1.p1[0]]
    reshard_rt.items 1 [g0.p1[0]]
    reshard_rt.items 2 [g1.p2[0]]
    reshard_rt.items 3 [g1.p0[0]]
    reshard_rt.items 4 [g0.p2[0]]
    reshard_rt.items 5 [g0.p3[0]]
    reshard_rt.items 6 [g0.p0[0], g0.p1[0]]
    reshard_rt.items 7 [g0.p2[0], g0.p3[0]]
    reshard_rt.rank 0 workspace = 16 {
      reshard_rt.send to 4 phase 0 start 0 quota 6 bytes 34 items 0
    }
    reshard_rt.rank 1 workspace = 32 {
      reshard_rt.send to 4 phase 0 start 0 quota 6 bytes 24 items 1
      reshard_rt.send to 5 phase 0 start 0 quota 6 bytes 2 items 2
    }
    reshard_rt.rank 2 workspace = 32 {
      reshard_rt.send to 4 phase 0 start 0 quota 6 bytes 1 items 3
      reshard_rt.send to 5 phase 0 start 0 quota 6 bytes 32 items 4
    }
    reshard_rt.rank 3 workspace = 16 {
      reshard_rt.send to 5 phase 0 start 0 quota 6 bytes 24 items 5
    }
    reshard_rt.rank 4 workspace = 48 {
      reshard_rt.send to 5 phase 1 start 6 quota 6 bytes 56 items 6
      reshard_rt.recv from 0 phase 0 start 0 quota 6 bytes 34 items 0
      reshard_rt.recv from 1 phase 0 start 0 quota 6 bytes 24 items 1
      reshard_rt.recv from 2 phase 0 start 0 quota 6 bytes 1 items 3
      reshard_rt.recv from 5 phase 1 start 6 quota 6 bytes 56 items 7
    }
    reshard_rt.rank 5 workspace = 48 {
      reshard_rt.send to 4 phase 1 start 6 quota 6 bytes 56 items 7
      reshard_rt.recv from 1 phase 0 start 0 quota 6 bytes 2 items 2
      reshard_rt.recv from 2 phase 0 start 0 quota 6 bytes 32 items 4
      reshard_rt.recv from 3 phase 0 start 0 quota 6 bytes 24 items 5
      reshard_rt.recv from 4 phase 1 start 6 quota 6 bytes 56 items 6
    }
  }
}

