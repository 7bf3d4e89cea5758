// reshard-select-sources errors: an unknown strategy (a typed option: the
// option parser refuses it before any pass runs, names are case-sensitive;
// gather-broadcast, a report baseline and not a strategy, is refused with a
// message that says so, by the pass, the pipeline and reshard-compile), a module not
// yet planned (the tensor in no group is named, with what to run first),
// a tensor in two groups, and the explicit reference form as input.

// RUN: rm -rf %t && split-file %s %t
// RUN: not reshard-opt %t/layout.mlir --reshard-intersect --reshard-select-sources=strategy=fastest -o /dev/null 2>&1 | FileCheck %s --check-prefix=FASTEST
// FASTEST: for the --strategy option: Cannot find option named 'fastest'!
// RUN: not reshard-opt %t/layout.mlir --reshard-intersect --reshard-select-sources=strategy=Direct -o /dev/null 2>&1 | FileCheck %s --check-prefix=CASE
// CASE: for the --strategy option: Cannot find option named 'Direct'!
// RUN: not reshard-opt %t/layout.mlir --reshard-intersect --reshard-select-sources=strategy=gather-broadcast -o /dev/null 2>&1 | FileCheck %s --check-prefix=GB
// GB: layout.mlir:1:1: error: reshard-select-sources: strategy=gather-broadcast is a baseline of the report, not a plan strategy: every plan's report prints its figures beside the plan's (baselines.gather-broadcast); plan with balanced or direct
// RUN: not reshard-opt %t/layout.mlir --reshard-plan-pipeline=strategy=gather-broadcast -o /dev/null 2>&1 | FileCheck %s --check-prefix=GB
// reshard-compile checks it with its other options, before any stage.
// RUN: not reshard-compile %t/layout.mlir --strategy=gather-broadcast --emit=none --report=- 2>&1 | FileCheck %s --check-prefix=GB-COMPILE
// GB-COMPILE: reshard-compile: error: --strategy=gather-broadcast is a baseline of the report, not a plan strategy
// The pass says so before it reads the module's plan (none here).
// RUN: not reshard-opt %t/layout.mlir --reshard-select-sources=strategy=gather-broadcast -o /dev/null 2>&1 | FileCheck %s --check-prefix=GB
// The valid names are listed by --help.
// RUN: reshard-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --reshard-select-sources
// HELP: --strategy=<value>
// HELP-NEXT: =balanced
// HELP-NEXT: =direct
// HELP-NEXT: =gather-broadcast - refused: a baseline of the report
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
// expected-error @+1 {{'reshard.redistribute' op is in no reshard.group; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --reshard-select-sources)}}
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
// expected-error @+1 {{'reshard.redistribute' op is in no reshard.group; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --reshard-select-sources)}}
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

// One group lists a tensor twice (the planner's note once pointed at a
// group not yet read, and crashed).
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.class @class0 of @w rank 1 [
  box [0] size [2] dst 0 at [0] src 0 at [0],
  box [2] size [2] dst 0 at [2] src 1 at [0]
]
// expected-error @+1 {{'reshard.group' op lists tensor @w twice; a group lists each member once}}
reshard.group @group0 class @class0 from @m to @m tensors [@w, @w]

// -----

// The explicit reference form is no input to the planning passes.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op is the explicit reference form (reshard-expand writes it); reshard-select-sources works on classes and groups: give it the module before reshard-expand}}
reshard.pieces @w rank 1 holders [[0], [1]] [
  box [0] size [2] from 0 at [0] to 0 at [0] group 0,
  box [2] size [2] from 1 at [0] to 0 at [2] group 1,
  box [0] size [2] from 0 at [0] to 1 at [0] group 0,
  box [2] size [2] from 1 at [0] to 1 at [2] group 1
]
