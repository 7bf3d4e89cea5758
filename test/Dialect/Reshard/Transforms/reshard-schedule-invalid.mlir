// reshard-schedule errors: a staging budget below one 8-byte element (the
// largest element type), fewer than 2 operations per step (a relay must
// receive and send), a module not yet intersected, and a tensor with two
// piece tables. Option errors are reported at the module, so those cases
// spell out `module`; the smallest accepted values are checked to pass.

// RUN: rm -rf %t && split-file %s %t
// RUN: reshard-opt %t/budget-7.mlir --reshard-intersect --reshard-schedule=staging-budget=7 -verify-diagnostics
// RUN: reshard-opt %t/budget-0.mlir --reshard-intersect --reshard-schedule=staging-budget=0 -verify-diagnostics
// RUN: reshard-opt %t/budget-negative.mlir --reshard-intersect --reshard-schedule=staging-budget=-64 -verify-diagnostics
// RUN: reshard-opt %t/ops-1.mlir --reshard-intersect --reshard-schedule=max-ops-per-step=1 -verify-diagnostics
// RUN: reshard-opt %t/ops-0.mlir --reshard-intersect --reshard-schedule=max-ops-per-step=0 -verify-diagnostics
// RUN: reshard-opt %t/tables.mlir -split-input-file --reshard-schedule -verify-diagnostics
// The pass fails: a non-zero exit status without -verify-diagnostics.
// RUN: not reshard-opt %t/budget-7.mlir --reshard-intersect --reshard-schedule=staging-budget=7 -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: reshard-schedule: the staging budget of 7 bytes cannot hold one 8-byte element; give at least 8
// The limits themselves are accepted: 4 x f64 over tp = 2 on ranks 0, 1 to
// both ranks replicated; each keeps its half locally (2 pieces, not split)
// and gets the other half from its peer as two 8-byte pieces (4 pieces).
// RUN: reshard-opt %t/budget-0.mlir --reshard-intersect --reshard-schedule="staging-budget=8 max-ops-per-step=2" | reshard-run - --check | FileCheck %s --check-prefix=LIMITS
// LIMITS: checked 1 tensors, 6 pieces, 8 destination elements: all correct

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
// expected-error @+1 {{'reshard.redistribute' op has no reshard.pieces table; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --reshard-schedule)}}
reshard.redistribute @not_intersected from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>

// -----

// A second table for one tensor.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @two_tables from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-note @+1 {{first table here}}
reshard.pieces @two_tables rank 1 holders [] []
// expected-error @+1 {{'reshard.pieces' op is a second piece table for tensor @two_tables; a tensor has one}}
reshard.pieces @two_tables rank 1 holders [] []
