// reshard-select-sources errors: an unknown strategy (a typed option: the
// option parser refuses it before any pass runs, names are case-sensitive,
// and gather-broadcast is a report baseline, not a strategy), a module not
// yet planned (the tensor without a table is named, with what to run
// first), and a tensor with two piece tables.

// RUN: rm -rf %t && split-file %s %t
// RUN: not reshard-opt %t/layout.mlir --reshard-intersect --reshard-select-sources=strategy=fastest -o /dev/null 2>&1 | FileCheck %s --check-prefix=FASTEST
// FASTEST: for the --strategy option: Cannot find option named 'fastest'!
// RUN: not reshard-opt %t/layout.mlir --reshard-intersect --reshard-select-sources=strategy=Direct -o /dev/null 2>&1 | FileCheck %s --check-prefix=CASE
// CASE: for the --strategy option: Cannot find option named 'Direct'!
// RUN: not reshard-opt %t/layout.mlir --reshard-intersect --reshard-select-sources=strategy=gather-broadcast -o /dev/null 2>&1 | FileCheck %s --check-prefix=GB
// GB: for the --strategy option: Cannot find option named 'gather-broadcast'!
// The valid names are listed by --help.
// RUN: reshard-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --reshard-select-sources
// HELP: --strategy=<value>
// HELP-NEXT: =balanced
// HELP-NEXT: =direct
// RUN: reshard-opt %t/tables.mlir -split-input-file --reshard-select-sources -verify-diagnostics
// RUN: reshard-opt %t/tables.mlir -split-input-file --reshard-select-sources=strategy=direct -verify-diagnostics

//--- layout.mlir
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- tables.mlir
// Not intersected yet.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{'reshard.redistribute' op has no reshard.pieces table; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --reshard-select-sources)}}
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
// expected-error @+1 {{'reshard.redistribute' op has no reshard.pieces table; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --reshard-select-sources)}}
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
