// Input of test/Integration/mpi/relay-tree.test and
// test/Dialect/Reshard/Transforms/reshard-select-sources-relay-tree.mlir:
// four trainer GPUs of domain 0 hold a tensor that two engine replicas
// need, one in domain 1 (ranks 4, 5) and one in domain 2 (ranks 8, 9).
reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [4] axes = ["tp"] ranks = [0, 1, 2, 3]
reshard.mesh @infer shape = [2, 2] axes = ["dp", "tp"] ranks = [4, 5, 8, 9]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[tp], []]> topology @t
    : tensor<256x512xf32> -> tensor<256x512xf32>
reshard.redistribute @v from @train <[[], [tp]]> to @infer <[[], [tp]]> topology @t
    : tensor<128x1024xbf16> -> tensor<128x1024xbf16>
