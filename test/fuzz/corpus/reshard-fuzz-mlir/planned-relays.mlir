module attributes {reshard.staging_budget = 32 : i64} {
  reshard.topology @t gpus_per_node = 2 nvl_domain_size = 2 nvlink_GBps_per_gpu = 4.500000e+02 nic_GBps_per_gpu = 5.000000e+01
  reshard.mesh @a shape = [2, 2] axes = ["x", "y"] ranks = [0, 1, 2, 3]
  reshard.mesh @b shape = [2] axes = ["z"] ranks = [4, 5]
  reshard.redistribute @w from @a <[[x], [y]]> to @b <[[], []]> topology @t : tensor<4x7xf32> -> tensor<4x7xf32>
  reshard.pieces @w rank 2 holders [[0], [1], [2], [3]] [
    box [0, 0] size [2, 4] from 0 at [0, 0] to 4 at [0, 0] group 0,
    box [0, 4] size [2, 3] from 1 at [0, 0] to 4 at [0, 4] group 1 step 1,
    box [2, 0] size [2, 4] from 2 at [0, 0] to 4 at [2, 0] group 2 via 5 step 2,
    box [2, 4] size [2, 3] from 3 at [0, 0] to 4 at [2, 4] group 3 via 5 step 4,
    box [0, 0] size [2, 4] from 0 at [0, 0] to 5 at [0, 0] group 0 via 4 step 3,
    box [0, 4] size [2, 3] from 1 at [0, 0] to 5 at [0, 4] group 1 via 4 step 5,
    box [2, 0] size [2, 4] from 2 at [0, 0] to 5 at [2, 0] group 2,
    box [2, 4] size [2, 3] from 3 at [0, 0] to 5 at [2, 4] group 3 step 1
  ]
  reshard.redistribute @v from @a <[[y] blocks [1, 4]]> to @b <[[z]]> topology @t : tensor<5xi8> -> tensor<5xi8>
  reshard.pieces @v rank 1 holders [[0, 2], [1, 3]] [
    box [0] size [1] from 2 at [0] to 4 at [0] group 0 step 1,
    box [1] size [2] from 0 at [1] to 4 at [1] group 0 step 1,
    box [3] size [2] from 1 at [0] to 5 at [0] group 1 step 1
  ]
}

