// Transits spread over far ends: holders 0 and 1 (domain 0) each send
// equal streams to receivers 4 and 5 (domain 1); GPUs 2 and 3 of domain 0
// hold only a small tensor, so NIC balancing moves one holder stream onto
// each. A moved stream joins its transit's own message to the same
// receiver, and under fair sharing a receiver left with fewer, larger
// messages waits on their senders; so the second move goes to the other
// receiver, not again to the first. Both interpreters check every
// element.

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=262144 transits=always" -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// CHECK: ] transits [
// CHECK-NEXT: 0 -> 4 via 3,
// CHECK-NEXT: 1 -> 5 via 2
// CHECK-NEXT: ]
// RUN: reshard-run %t.mlir --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-run %t.mlir --check --engine | FileCheck %s --check-prefix=EXEC
// EXEC: all correct

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @side shape = [2] axes = ["tp"] ranks = [2, 3]
reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [4, 5]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[], [tp]]> topology @t
    : tensor<512x512xf32> -> tensor<512x512xf32>
reshard.redistribute @u from @side <[[tp]]> to @infer <[[tp]]> topology @t
    : tensor<64xf32> -> tensor<64xf32>
