// reshard-schedule errors: a staging budget below one 8-byte element (the
// largest element type), fewer than 2 operations per step (a relay must
// receive and send), a module not yet intersected, a tensor in two
// groups, the explicit reference form as input, and a rank that would
// take more than 2^22 steps (plans keep per-step tables). Option errors are
// reported at the module, so those cases spell out `module`; the smallest
// accepted values are checked to pass.

// RUN: rm -rf %t && split-file %s %t
// RUN: reshard-opt %t/budget-7.mlir --reshard-intersect --reshard-schedule=staging-budget=7 -verify-diagnostics
// RUN: reshard-opt %t/budget-0.mlir --reshard-intersect --reshard-schedule=staging-budget=0 -verify-diagnostics
// RUN: reshard-opt %t/budget-negative.mlir --reshard-intersect --reshard-schedule=staging-budget=-64 -verify-diagnostics
// RUN: reshard-opt %t/ops-1.mlir --reshard-intersect --reshard-schedule=max-ops-per-step=1 -verify-diagnostics
// RUN: reshard-opt %t/ops-0.mlir --reshard-intersect --reshard-schedule=max-ops-per-step=0 -verify-diagnostics
// RUN: reshard-opt %t/tables.mlir -split-input-file --reshard-schedule -verify-diagnostics
// RUN: reshard-opt %t/steps.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=65536 -verify-diagnostics
// RUN: reshard-opt %t/stream-steps.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 -verify-diagnostics
// The pass fails: a non-zero exit status without -verify-diagnostics.
// RUN: not reshard-opt %t/budget-7.mlir --reshard-intersect --reshard-schedule=staging-budget=7 -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: reshard-schedule: the staging budget of 7 bytes cannot hold one 8-byte element; give at least 8
// The limits themselves are accepted: 4 x f64 over tp = 2 on ranks 0, 1 to
// both ranks replicated; each keeps its half locally (2 pieces, in no
// stream) and gets the other half from its peer (2 pieces), each 16-byte
// stream cut into two 8-byte steps.
// RUN: reshard-opt %t/budget-0.mlir --reshard-intersect --reshard-schedule="staging-budget=8 max-ops-per-step=2" | reshard-run - --check | FileCheck %s --check-prefix=LIMITS
// RUN: reshard-opt %t/budget-0.mlir --reshard-intersect --reshard-schedule="staging-budget=8 max-ops-per-step=2" | reshard-run - --check --engine | FileCheck %s --check-prefix=LIMITS
// LIMITS: checked 1 tensors, 4 pieces, 8 destination elements: all correct

//--- budget-7.mlir
// expected-error @+1 {{reshard-schedule: the staging budget of 7 bytes cannot hold one 8-byte element; give at least 8}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf64> -> tensor<4xf64>
}

//--- budget-0.mlir
// expected-error @+1 {{reshard-schedule: the staging budget of 0 bytes cannot hold one 8-byte element; give at least 8}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf64> -> tensor<4xf64>
}

//--- budget-negative.mlir
// expected-error @+1 {{reshard-schedule: the staging budget of -64 bytes cannot hold one 8-byte element; give at least 8}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf64> -> tensor<4xf64>
}

//--- ops-1.mlir
// expected-error @+1 {{reshard-schedule: a step needs room for at least 2 operations (a send and a receive)}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf64> -> tensor<4xf64>
}

//--- ops-0.mlir
// expected-error @+1 {{reshard-schedule: a step needs room for at least 2 operations (a send and a receive)}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf64> -> tensor<4xf64>
}

//--- tables.mlir
// Not intersected yet.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{'reshard.redistribute' op is in no reshard.group; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --reshard-schedule)}}
reshard.redistribute @not_intersected from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>

// -----

// One tensor in a group, the other not: the error names the second.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @planned from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.class @class0 of @planned rank 1 [
  box [0] size [2] dst 0 at [0] src 0 at [0],
  box [2] size [2] dst 0 at [2] src 1 at [0]
]
reshard.group @group0 class @class0 from @m to @m tensors [@planned]
// expected-error @+1 {{'reshard.redistribute' op is in no reshard.group; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --reshard-schedule)}}
reshard.redistribute @unplanned from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>

// -----

// Two groups list one tensor.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.class @class0 of @w rank 1 [
  box [0] size [2] dst 0 at [0] src 0 at [0],
  box [2] size [2] dst 0 at [2] src 1 at [0]
]
// expected-note @+1 {{its first group}}
reshard.group @group0 class @class0 from @m to @m tensors [@w]
// expected-error @+1 {{'reshard.group' op lists tensor @w, which is already in a group}}
reshard.group @group1 class @class0 from @m to @m tensors [@w]

// -----

// The explicit reference form is no input to the planning passes.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op is the explicit reference form (reshard-expand writes it); reshard-schedule works on classes and groups: give it the module before reshard-expand}}
reshard.pieces @w rank 1 holders [[0], [1]] [
  box [0] size [2] from 0 at [0] to 0 at [0] group 0,
  box [2] size [2] from 1 at [0] to 0 at [2] group 1,
  box [0] size [2] from 0 at [0] to 1 at [0] group 0,
  box [2] size [2] from 1 at [0] to 1 at [2] group 1
]

//--- steps.mlir
// int8 [2^40] from 4 ranks to 3: rank 0 sends 2^38 bytes, 2^22 steps of a
// 64 KiB budget.
// expected-error @+1 {{reshard-schedule: rank 0 stages 274877906944 bytes, 4194304 steps or more at the staging budget of 65536 bytes, where a plan takes at most 4194304 a rank; raise the budget}}
module {
  reshard.mesh @a shape = [4] axes = ["x"] ranks = [0, 1, 2, 3]
  reshard.mesh @b shape = [3] axes = ["x"] ranks = [4, 5, 6]
  reshard.redistribute @huge from @a <[[x]]> to @b <[[x]]>
      : tensor<1099511627776xi8> -> tensor<1099511627776xi8>
}

//--- stream-steps.mlir
// A rank whose bytes take fewer steps than the limit (16 MiB in 16-byte
// steps: 2^20), but whose schedule takes more: 14 one-byte streams share
// its budget with the big one, which moves 2 bytes a step.
// expected-error @+1 {{reshard-schedule: the stream from rank 1 to rank 0 ends at step 8388608, past the 4194304 steps a plan takes a rank; raise the staging budget of 16 bytes}}
module {
  reshard.mesh @r0 shape = [1] axes = ["x"] ranks = [0]
  reshard.mesh @r1 shape = [1] axes = ["x"] ranks = [1]
  reshard.mesh @r2 shape = [1] axes = ["x"] ranks = [2]
  reshard.mesh @r3 shape = [1] axes = ["x"] ranks = [3]
  reshard.mesh @r4 shape = [1] axes = ["x"] ranks = [4]
  reshard.mesh @r5 shape = [1] axes = ["x"] ranks = [5]
  reshard.mesh @r6 shape = [1] axes = ["x"] ranks = [6]
  reshard.mesh @r7 shape = [1] axes = ["x"] ranks = [7]
  reshard.mesh @r8 shape = [1] axes = ["x"] ranks = [8]
  reshard.mesh @r9 shape = [1] axes = ["x"] ranks = [9]
  reshard.mesh @r10 shape = [1] axes = ["x"] ranks = [10]
  reshard.mesh @r11 shape = [1] axes = ["x"] ranks = [11]
  reshard.mesh @r12 shape = [1] axes = ["x"] ranks = [12]
  reshard.mesh @r13 shape = [1] axes = ["x"] ranks = [13]
  reshard.mesh @r14 shape = [1] axes = ["x"] ranks = [14]
  reshard.mesh @r15 shape = [1] axes = ["x"] ranks = [15]
  reshard.redistribute @big from @r1 <[[]]> to @r0 <[[]]>
      : tensor<16777216xi8> -> tensor<16777216xi8>
  reshard.redistribute @t2 from @r2 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t3 from @r3 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t4 from @r4 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t5 from @r5 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t6 from @r6 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t7 from @r7 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t8 from @r8 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t9 from @r9 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t10 from @r10 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t11 from @r11 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t12 from @r12 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t13 from @r13 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t14 from @r14 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
  reshard.redistribute @t15 from @r15 <[[]]> to @r0 <[[]]> : tensor<1xi8> -> tensor<1xi8>
}
