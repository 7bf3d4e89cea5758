// Rotating feeders: four trainer GPUs of domain 0 hold two tensors by row
// halves, two engine replicas in domains 1 and 2 need them by columns,
// and the holders' NICs would pass the physical bound, so relay-tree=auto
// feeds one replica from the other. The domain a group's holders serve
// first rotates with the group: @w (group 0) enters domain 1 first, which
// feeds domain 2; @u (group 1) enters domain 2 first, which feeds domain
// 1. Rotating feeders make more pairs of feeding and fed entries (22
// streams even with lanes of 8 ranks); where that passes
// relay-tree-max-streams, feeders in rank order (domain 1 feeds both, 20
// streams with a lane per holder, 16 with lanes of 4 ranks) come before
// dropping the tree. Every plan is checked element by element.

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536" -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// CHECK: reshard.group @group0 {{.*}} tensors [@w]
// CHECK: network 2 holder 0 entry 0 from domain 1
// CHECK: reshard.group @group1 {{.*}} tensors [@u]
// CHECK-NEXT: network 1 holder 0 entry 0 from domain 2
// RUN: reshard-run %t.mlir --check | FileCheck %s --check-prefix=EXEC
// EXEC: checked 2 tensors, 32 pieces, 524288 destination elements: all correct

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree-max-streams=20" -o %t.order.mlir 2>&1 | FileCheck %s --check-prefix=ORDER-REMARK
// ORDER-REMARK: remark: reshard-select-sources: relay-tree feeders in rank order: with feeders rotating by group the plan would have 22 streams (lanes of 8 ranks, before transits), over the 20 relay-tree=auto allows (relay-tree-max-streams)
// ORDER-REMARK-NOT: relay lanes shared
// RUN: FileCheck %s --check-prefix=ORDER < %t.order.mlir
// ORDER-NOT: from domain 2
// ORDER: reshard.group @group1 {{.*}} tensors [@u]
// ORDER-NEXT: network 2 holder 0 entry 0 from domain 1
// RUN: reshard-run %t.order.mlir --check | FileCheck %s --check-prefix=EXEC

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree-max-streams=16" -o %t.span.mlir 2>&1 | FileCheck %s --check-prefix=SPAN-REMARK
// SPAN-REMARK: remark: reshard-select-sources: relay-tree feeders in rank order
// SPAN-REMARK: remark: reshard-select-sources: relay lanes shared by 4 consecutive ranks: with a lane per holder the plan would have 20 streams, over the 16 relay-tree=auto allows (relay-tree-max-streams); it has 16 (before transits)
// RUN: reshard-run %t.span.mlir --check | FileCheck %s --check-prefix=EXEC

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree-max-streams=14" -o %t.none.mlir 2>&1 | FileCheck %s --check-prefix=NONE-REMARK
// NONE-REMARK-NOT: feeders in rank order
// NONE-REMARK: remark: reshard-select-sources: no relay tree: with one the plan would have 20 streams (relay lanes, before transits; 16 with lanes of 8 ranks), over the 14 relay-tree=auto allows
// RUN: FileCheck %s --check-prefix=NONE < %t.none.mlir
// NONE-NOT: from domain
// With threads (the default) the rank-order attempt runs on the context's
// thread pool while the rotating one is planned; without, after it: the
// same plans either way.
// RUN: reshard-opt %s --mlir-disable-threading --reshard-plan-pipeline="lower=false staging-budget=65536" -o %t.seq.mlir
// RUN: diff %t.mlir %t.seq.mlir
// RUN: reshard-opt %s --mlir-disable-threading --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree-max-streams=20" -o %t.order.seq.mlir
// RUN: diff %t.order.mlir %t.order.seq.mlir
// RUN: reshard-opt %s --mlir-disable-threading --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree-max-streams=16" -o %t.span.seq.mlir
// RUN: diff %t.span.mlir %t.span.seq.mlir
// RUN: reshard-opt %s --mlir-disable-threading --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree-max-streams=14" -o %t.none.seq.mlir
// RUN: diff %t.none.mlir %t.none.seq.mlir

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
reshard.mesh @infer shape = [2, 4] axes = ["dp", "tp"] ranks = [4, 5, 6, 7, 8, 9, 10, 11]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[], [tp]]> topology @t
    : tensor<256x512xf32> -> tensor<256x512xf32>
reshard.redistribute @u from @train <[[tp], []]> to @infer <[[], [tp]]> topology @t
    : tensor<256x512xbf16> -> tensor<256x512xbf16>
