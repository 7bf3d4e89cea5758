// A holder's stream sends first what its receiver forwards. Rank 0 sends
// rank 4 tensor @a (for rank 4 alone) and @b (which rank 4 forwards to
// rank 5). In enumeration order @a would come first and the relay 4 -> 5
// could start only once @a had passed (step 15; 40 steps in all); with @b
// first it starts in step 2 (27 steps). Both interpreters check every
// element.

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=8192" | FileCheck %s
// CHECK: reshard.schedule staging_budget = 8192 max_ops_per_step = 1024 [
// CHECK-NEXT: stream 0 -> 4 phase 0 start 0 quota 5243,
// CHECK-NEXT: stream 0 -> 5 phase 0 start 0 quota 2622,
// CHECK-NEXT: stream 4 -> 5 phase 1 start 2 quota 2622
// CHECK-NEXT: ]

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=8192" --reshard-report=text -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: reshard 196608 65536 0 196608 27 {{[0-9]}}

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=8192" | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=8192" | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// EXEC: checked 3 tensors, 4 pieces, 65536 destination elements: all correct

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @four shape = [1] axes = ["x"] ranks = [4]
reshard.mesh @five shape = [1] axes = ["x"] ranks = [5]
reshard.mesh @infer shape = [2] axes = ["dp"] ranks = [4, 5]
reshard.redistribute @a from @train <[[], []]> to @four <[[], []]> topology @t
    : tensor<128x128xf32> -> tensor<128x128xf32>
reshard.redistribute @c from @train <[[], []]> to @five <[[], []]> topology @t
    : tensor<128x128xf32> -> tensor<128x128xf32>
reshard.redistribute @b from @train <[[], []]> to @infer <[[], []]> topology @t
    : tensor<128x128xf32> -> tensor<128x128xf32>
