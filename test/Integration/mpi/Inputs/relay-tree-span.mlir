// Input of test/Integration/mpi/relay-tree.test (the layout of
// test/Dialect/Reshard/Transforms/reshard-select-sources-relay-lane-span.mlir):
// four trainer GPUs of domain 0 hold the tensor by row halves, two engine
// replicas in domains 1 and 2 need it by columns; domain 2 is fed from
// domain 1's entries. With relay-tree-max-streams=15 the holders of
// domain 0 share one relay lane. 12 ranks.
reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
reshard.mesh @infer shape = [2, 4] axes = ["dp", "tp"] ranks = [4, 5, 6, 7, 8, 9, 10, 11]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[], [tp]]> topology @t
    : tensor<256x512xf32> -> tensor<256x512xf32>
