// reshard-report errors: an unknown format (a typed option: refused by the
// option parser), two formats at once, an output file that cannot be
// opened, a module not planned at all (refused, naming
// reshard-plan-pipeline), one planned only in part, a lowered plan, and the
// explicit reference form (reshard.pieces, which reshard-run executes).

// RUN: rm -rf %t && split-file %s %t
// RUN: reshard-opt %t/unplanned.mlir --reshard-report -verify-diagnostics
// RUN: reshard-opt %t/lowered.mlir --reshard-report=json -verify-diagnostics
// RUN: reshard-opt %t/tables.mlir -split-input-file --reshard-report -verify-diagnostics
// RUN: reshard-opt %t/tables.mlir -split-input-file --reshard-report=format=json -verify-diagnostics
// The option errors stop reshard-opt before any pass runs; nothing is
// printed.
// RUN: not reshard-opt %t/unplanned.mlir --reshard-intersect --reshard-report=format=xml -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// FORMAT: for the --format option: Cannot find option named 'xml'!
// FORMAT-NOT: reshard report
// RUN: not reshard-opt %t/unplanned.mlir --reshard-intersect --reshard-report=xml -o /dev/null 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: no such option xml
// RUN: not reshard-opt %t/unplanned.mlir --reshard-intersect --reshard-report="json text" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: no such option json
// The output path names a missing directory; the message names the file.
// RUN: not reshard-opt %t/unplanned.mlir --reshard-intersect --reshard-report=output=%t/missing/report.txt -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: error: reshard-report: cannot open output file '{{.*}}missing/report.txt'
// OUTPUT-NOT: reshard report

//--- unplanned.mlir
// expected-error @+1 {{reshard-report: the module is not planned yet (no reshard.group); run --reshard-plan-pipeline=lower=false (or the planning passes) before --reshard-report, or use reshard-compile --report=FILE}}
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
// Planned in part: one tensor is in a group, the other in none.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{'reshard.redistribute' op is in no reshard.group; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --reshard-report)}}
reshard.redistribute @not_intersected from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.redistribute @intersected from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.class @class0 of @intersected rank 1 [
  box [0] size [2] dst 0 at [0] src 0 at [0],
  box [2] size [2] dst 0 at [2] src 1 at [0]
]
reshard.group @group0 class @class0 from @m to @m tensors [@intersected]

// -----

// The explicit reference form: reshard-run executes it; the report reads
// classes and groups.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op is the explicit reference form (reshard-expand's), which reshard-run executes; reshard-report reports the planned module (its reshard.class and reshard.group ops)}}
reshard.pieces @w rank 1 holders [[0], [1]] [
  box [0] size [2] from 0 at [0] to 0 at [0] group 0,
  box [2] size [2] from 1 at [0] to 0 at [2] group 1,
  box [0] size [2] from 0 at [0] to 1 at [0] group 0,
  box [2] size [2] from 1 at [0] to 1 at [2] group 1
]
