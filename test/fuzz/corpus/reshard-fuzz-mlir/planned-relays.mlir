module {
  reshard.topology @t gpus_per_node = 2 nvl_domain_size = 2 nvlink_GBps_per_gpu = 4.500000e+02 nic_GBps_per_gpu = 5.000000e+01
  reshard.mesh @a shape = [2, 2] axes = ["x", "y"] ranks = [0, 1, 2, 3]
  reshard.mesh @b shape = [2] axes = ["z"] ranks = [4, 5]
  reshard.redistribute @w from @a <[[x], [y]]> to @b <[[], []]> topology @t : tensor<4x7xf32> -> tensor<4x7xf32>
  reshard.redistribute @v from @a <[[y] blocks [1, 4]]> to @b <[[z]]> topology @t : tensor<5xi8> -> tensor<5xi8>
  reshard.class @class0 of @w rank 2 [
    box [0, 0] size [2, 4] dst 0 at [0, 0] src 0 at [0, 0],
    box [0, 4] size [2, 3] dst 0 at [0, 4] src 1 at [0, 0],
    box [2, 0] size [2, 4] dst 0 at [2, 0] src 2 at [0, 0],
    box [2, 4] size [2, 3] dst 0 at [2, 4] src 3 at [0, 0]
  ]
  reshard.class @class1 of @v rank 1 [
    box [0] size [1] dst 0 at [0] src 0 at [0],
    box [1] size [2] dst 0 at [1] src 0 at [1],
    box [3] size [2] dst 1 at [0] src 1 at [0]
  ]
  reshard.group @group0 class @class0 from @a to @b tensors [@w] routing balanced routes [
    piece 2 network 2 holder 0 entry 1,
    piece 3 network 2 holder 0 entry 1
  ]
  reshard.group @group1 class @class1 from @a to @b tensors [@v] routing balanced routes [
    piece 0 network 2 holder 1 entry 0
  ]
  reshard.schedule staging_budget = 32 max_ops_per_step = 1024 [
    stream 0 -> 4 phase 0 start 0 quota 6,
    stream 1 -> 4 phase 0 start 0 quota 6,
    stream 1 -> 5 phase 0 start 0 quota 6,
    stream 2 -> 4 phase 0 start 0 quota 6,
    stream 2 -> 5 phase 0 start 0 quota 6,
    stream 3 -> 5 phase 0 start 0 quota 6,
    stream 4 -> 5 phase 1 start 6 quota 6,
    stream 5 -> 4 phase 1 start 6 quota 6
  ]
}

