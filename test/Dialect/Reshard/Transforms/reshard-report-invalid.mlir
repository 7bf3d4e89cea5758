// reshard-report errors: an unknown format (named, with the valid ones),
// json and text together, an output file that cannot be opened, a module
// intersected only in part (one with no pieces at all gets the default plan,
// see reshard-report.mlir), a lowered plan, and a tensor with two piece
// tables. Option errors are reported at the module,
// so those cases spell out `module`.

// RUN: rm -rf %t && split-file %s %t
// RUN: reshard-opt %t/unknown-format.mlir --reshard-intersect --reshard-report=format=xml -verify-diagnostics
// RUN: reshard-opt %t/json-and-text.mlir --reshard-report="json text" -verify-diagnostics
// RUN: reshard-opt %t/lowered.mlir --reshard-report=json -verify-diagnostics
// RUN: reshard-opt %t/tables.mlir -split-input-file --reshard-report -verify-diagnostics
// RUN: reshard-opt %t/tables.mlir -split-input-file --reshard-report=format=json -verify-diagnostics
// The pass fails: a non-zero exit status without -verify-diagnostics, and
// nothing is printed.
// RUN: not reshard-opt %t/unknown-format.mlir --reshard-intersect --reshard-report=format=xml -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: error: reshard-report: unknown format 'xml'; use text or json
// FORMAT-NOT: reshard report
// The output path names a missing directory; the message names the file.
// RUN: not reshard-opt %t/unknown-format.mlir --reshard-intersect --reshard-report=output=%t/missing/report.txt -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: error: reshard-report: cannot open output file '{{.*}}missing/report.txt'
// OUTPUT-NOT: reshard report

//--- unknown-format.mlir
// expected-error @+1 {{reshard-report: unknown format 'xml'; use text or json}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- json-and-text.mlir
// expected-error @+1 {{reshard-report: json and text exclude each other}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- lowered.mlir
// expected-error @+1 {{reshard-report: the module holds a lowered reshard_rt.plan, which no longer has the pieces the report reads; report before convert-reshard-to-runtime}}
module {
  reshard_rt.plan @p num_ranks = 1 tensors = [] fingerprint = 0 {
  }
}

//--- tables.mlir
// Intersected in part: one tensor has its table, the other none.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{'reshard.redistribute' op has no reshard.pieces table; run --reshard-intersect before --reshard-report}}
reshard.redistribute @not_intersected from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.redistribute @intersected from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.pieces @intersected rank 1 holders [] []

// -----

// A second table for one tensor.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @two_tables from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-note @+1 {{first table here}}
reshard.pieces @two_tables rank 1 holders [] []
// expected-error @+1 {{'reshard.pieces' op is a second piece table for tensor @two_tables; a tensor has one}}
reshard.pieces @two_tables rank 1 holders [] []
