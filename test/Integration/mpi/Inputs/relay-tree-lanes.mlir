// Input of test/Integration/mpi/relay-tree.test and
// test/Dialect/Reshard/Transforms/reshard-select-sources-relay-tree.mlir:
// four engine replicas, two in domain 1 (ranks 4, 5) and two in domain 2
// (ranks 8, 9), each need the whole tensor that four trainer GPUs of
// domain 0 hold by rows. Fed from domain 1, domain 2's entries get some
// pieces from a holder and others from a feeder entry, and forward both
// to the other replica of their domain.
reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [4] axes = ["tp"] ranks = [0, 1, 2, 3]
reshard.mesh @infer shape = [4] axes = ["dp"] ranks = [4, 5, 8, 9]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[], []]> topology @t
    : tensor<256x512xf32> -> tensor<256x512xf32>
