// Two replicas in one NVLink domain: one network crossing, one relay.
reshard.topology @t gpus_per_node = 2 nvl_domain_size = 2 nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @a shape = [2, 2] axes = ["x", "y"] ranks = [0, 1, 2, 3]
reshard.mesh @b shape = [2] axes = ["z"] ranks = [4, 5]
reshard.redistribute @w from @a <[[x], [y]]> to @b <[[], []]> topology @t : tensor<4x7xf32> -> tensor<4x7xf32>
reshard.redistribute @v from @a <[[y] blocks [1, 4]]> to @b <[[z]]> topology @t : tensor<5xi8> -> tensor<5xi8>
