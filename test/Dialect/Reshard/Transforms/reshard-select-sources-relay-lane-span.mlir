// relay-tree=auto over relay-tree-max-streams: lanes per block of ranks.
// Four trainer GPUs of domain 0 hold the tensor by row halves (ranks 0, 2
// and 1, 3 each hold one); two engine replicas in domains 1 and 2 need it
// by columns. Domain 2 is fed from domain 1's entries, which forward what
// each holder sent them in a lane of their own: 16 streams. With at most
// 15 the holders of one domain (4 consecutive ranks) share a lane: 12
// streams, the relays one step later (start 4 instead of 2), every element
// still in place. Past the widest span (8 ranks) the tree is dropped.

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536" -o %t.holder.mlir
// RUN: FileCheck %s --check-prefix=HOLDER < %t.holder.mlir
// HOLDER-NOT: relay_lane_span
// HOLDER: stream 4 -> 8 phase 1 start 2
// HOLDER: stream 4 -> 8 phase 2 start 2
// HOLDER: stream 5 -> 9 phase 3 start 2
// HOLDER: stream 5 -> 9 phase 4 start 2

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree-max-streams=15" -o %t.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// REMARK: remark: reshard-select-sources: relay lanes shared by 4 consecutive ranks: with a lane per holder the plan would have 16 streams, over the 15 relay-tree=auto allows (relay-tree-max-streams); it has 12 (before transits)
// RUN: FileCheck %s < %t.mlir
// CHECK: module attributes {reshard.relay_lane_span = 4 : i64}
// CHECK: from domain 1
// CHECK: stream 4 -> 8 phase 1 start 4
// CHECK-NOT: stream 4 -> 8 phase 2
// CHECK: stream 5 -> 9 phase 1 start 4
// CHECK-NOT: phase 3
// CHECK: relay_lanes
// RUN: reshard-run %t.mlir --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-run %t.mlir --check --engine | FileCheck %s --check-prefix=EXEC
// EXEC: checked 1 tensors, 16 pieces, 262144 destination elements: all correct
// RUN: reshard-opt %t.mlir --reshard-report=text -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: relay lanes: each relay forwards what the holders of each block of 4 ranks sent it in a stream of its own
// RUN: reshard-opt %t.mlir --reshard-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// JSON: "relay_lane_span": 4
// The lowering reads the span: its streams are the schedule's.
// RUN: reshard-opt %t.mlir --convert-reshard-to-runtime | FileCheck %s --check-prefix=LOWERED
// LOWERED: reshard_rt.send to 8 phase 1 start 4

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree-max-streams=11" -o %t.dropped.mlir 2>&1 | FileCheck %s --check-prefix=DROPPED
// DROPPED: remark: reshard-select-sources: no relay tree: with one the plan would have 16 streams (relay lanes, before transits; 12 with lanes of 8 ranks), over the 11 relay-tree=auto allows (relay-tree-max-streams; bound keeps it)
// RUN: FileCheck %s --check-prefix=DROPPED-PLAN < %t.dropped.mlir
// DROPPED-PLAN-NOT: relay_lane_span
// DROPPED-PLAN-NOT: from domain

// Without its span the schedule is not the routing's; a span below 1 is
// refused.
// RUN: sed 's/attributes {reshard.relay_lane_span = 4 : i64}//' %t.mlir | not reshard-opt --convert-reshard-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-SPAN
// NO-SPAN: error: 'reshard.schedule' op has 12 streams but the plan's routing makes 16 (a different set)
// RUN: sed 's/relay_lane_span = 4 : i64/relay_lane_span = 0 : i64/' %t.mlir | not reshard-opt --convert-reshard-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: 'builtin.module' op has reshard.relay_lane_span = 0 : i64; it must be an integer of at least 1 (the ranks a relay lane spans)
// RUN: sed 's/relay_lane_span = 4 : i64/relay_lane_span = 4 : si64/' %t.mlir | not reshard-opt --convert-reshard-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIGNED
// SIGNED: error: 'builtin.module' op has reshard.relay_lane_span = 4 : si64; it must be an integer of at least 1
// RUN: sed 's/relay_lane_span = 4 : i64/relay_lane_span = "4"/' %t.mlir | not reshard-opt --convert-reshard-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRING
// STRING: error: 'builtin.module' op has reshard.relay_lane_span = "4"; it must be an integer of at least 1

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
reshard.mesh @infer shape = [2, 4] axes = ["dp", "tp"] ranks = [4, 5, 6, 7, 8, 9, 10, 11]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[], [tp]]> topology @t
    : tensor<256x512xf32> -> tensor<256x512xf32>
