// NIC balancing counts a relay tree's crossings: replica 1's entries (8,
// 9) take @w from replica 0's (4, 5) over the network, and rank 10 of the
// same domain takes @x from both holders. The relay streams cannot move,
// but they load 8's and 9's NICs, so neither is a better entry for a
// holder's stream to 10: transits=always adds none (counting only holder
// streams, 8 looked idle and took 1 -> 10). Both interpreters check every
// element.

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree=always transits=always" -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// CHECK: reshard.schedule
// CHECK-NOT: transits
// RUN: reshard-opt %t.mlir --reshard-report=text -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: relay tree: 2 crossings of a piece into a domain come from another domain's entries
// REPORT-NOT: transits:
// RUN: reshard-run %t.mlir --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-run %t.mlir --check --engine | FileCheck %s --check-prefix=EXEC
// EXEC: all correct

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @infer shape = [2, 2] axes = ["dp", "tp"] ranks = [4, 5, 8, 9]
reshard.mesh @late shape = [1] axes = ["tp"] ranks = [10]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[tp], []]> topology @t
    : tensor<512x512xf32> -> tensor<512x512xf32>
reshard.redistribute @x from @train <[[tp], []]> to @late <[[], []]> topology @t
    : tensor<256x256xf32> -> tensor<256x256xf32>
