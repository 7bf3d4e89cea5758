// Input of test/Integration/mpi/relay-lanes.test and
// test/Dialect/Reshard/Transforms/reshard-schedule-lanes.mlir.
reshard.topology @t gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [8] axes = ["tp"] ranks = [0, 1, 2, 3, 4, 5, 6, 7]
reshard.mesh @infer shape = [2] axes = ["dp"] ranks = [8, 9]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[], []]> topology @t
    : tensor<64x256xf32> -> tensor<64x256xf32>
reshard.redistribute @v from @train <[[], [tp]]> to @infer <[[], []]> topology @t
    : tensor<32x512xbf16> -> tensor<32x512xbf16>
