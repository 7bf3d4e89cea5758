// reshard-select-sources errors: an unknown strategy (named, with the valid
// ones), a module not yet intersected (the tensor without a table is named,
// with the pass to run first), and a tensor with two piece tables. Option
// errors are reported at the module, so those cases spell out `module`.

// RUN: rm -rf %t && split-file %s %t
// RUN: reshard-opt %t/unknown-strategy.mlir --reshard-intersect --reshard-select-sources=strategy=fastest -verify-diagnostics
// RUN: reshard-opt %t/wrong-case.mlir --reshard-intersect --reshard-select-sources=strategy=Direct -verify-diagnostics
// RUN: reshard-opt %t/tables.mlir -split-input-file --reshard-select-sources -verify-diagnostics
// RUN: reshard-opt %t/tables.mlir -split-input-file --reshard-select-sources=strategy=direct -verify-diagnostics
// The pass fails: a non-zero exit status without -verify-diagnostics.
// RUN: not reshard-opt %t/unknown-strategy.mlir --reshard-intersect --reshard-select-sources=strategy=fastest -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: reshard-select-sources: unknown strategy 'fastest'; use balanced or direct
// gather-broadcast is a report baseline; the message says where to find it.
// RUN: not reshard-opt %t/unknown-strategy.mlir --reshard-intersect --reshard-select-sources=strategy=gather-broadcast -o /dev/null 2>&1 | FileCheck %s --check-prefix=GB
// GB: error: reshard-select-sources: unknown strategy 'gather-broadcast'; use balanced or direct (gather-broadcast is a baseline: reshard-report prints its figures beside the plan's, computed from the same pieces)

//--- unknown-strategy.mlir
// expected-error @+1 {{reshard-select-sources: unknown strategy 'fastest'; use balanced or direct}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- wrong-case.mlir
// Strategy names are case-sensitive.
// expected-error @+1 {{reshard-select-sources: unknown strategy 'Direct'; use balanced or direct}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- tables.mlir
// Not intersected yet.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{'reshard.redistribute' op has no reshard.pieces table; run --reshard-intersect before --reshard-select-sources}}
reshard.redistribute @not_intersected from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>

// -----

// One tensor intersected, the other not: the error names the second.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @planned from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.pieces @planned rank 1 holders [[0], [1]] [
  box [0] size [2] from 0 at [0] to 0 at [0] group 0,
  box [2] size [2] from 1 at [0] to 0 at [2] group 1,
  box [0] size [2] from 0 at [0] to 1 at [0] group 0,
  box [2] size [2] from 1 at [0] to 1 at [2] group 1
]
// expected-error @+1 {{'reshard.redistribute' op has no reshard.pieces table; run --reshard-intersect before --reshard-select-sources}}
reshard.redistribute @unplanned from @m <[[tp]]> to @m <[[]]>
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
