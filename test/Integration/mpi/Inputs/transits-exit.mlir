// Input of test/Integration/mpi/transits.test (the exit case): domain 0
// (ranks 0-3) has two holders (0, 1) of what all of domain 1 (4-7) needs
// and two GPUs (2, 3) that hold only a small tensor, so with
// transits=always holder streams leave through the NICs of 2 and 3 too.
reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @side shape = [2] axes = ["tp"] ranks = [2, 3]
reshard.mesh @infer shape = [4] axes = ["tp"] ranks = [4, 5, 6, 7]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[tp], []]> topology @t
    : tensor<512x1024xf32> -> tensor<512x1024xf32>
reshard.redistribute @v from @train <[[], [tp]]> to @infer <[[], [tp]]> topology @t
    : tensor<256x2048xbf16> -> tensor<256x2048xbf16>
reshard.redistribute @u from @side <[[tp]]> to @infer <[[]]> topology @t
    : tensor<64xf32> -> tensor<64xf32>
