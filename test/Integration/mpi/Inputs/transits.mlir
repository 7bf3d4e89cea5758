// Input of test/Integration/mpi/transits.test and
// test/Dialect/Reshard/Transforms/reshard-schedule-transits.mlir: domain 1
// (ranks 4-7) holds two source GPUs (4, 5) and both destinations (6, 7),
// so what domain 0 sends it enters through four NICs, not two.
reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [4] axes = ["tp"] ranks = [0, 1, 2, 3]
reshard.mesh @side shape = [2] axes = ["tp"] ranks = [4, 5]
reshard.mesh @infer shape = [2] axes = ["dp"] ranks = [6, 7]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[], []]> topology @t
    : tensor<512x1024xf32> -> tensor<512x1024xf32>
reshard.redistribute @v from @train <[[], [tp]]> to @infer <[[], []]> topology @t
    : tensor<256x2048xbf16> -> tensor<256x2048xbf16>
reshard.redistribute @u from @side <[[tp]]> to @infer <[[]]> topology @t
    : tensor<64xf32> -> tensor<64xf32>
