// convert-reshard-to-runtime errors: a redistribution in no group (the
// planning passes have not run), plan names that cannot name C functions
// (<name>_run, ...), whether given by plan-name or taken from the module's
// name, the explicit reference form as input, and a schedule that does not
// belong to the routing. Option and name errors are reported at the
// module, so those cases spell out `module`. The pass fails: a non-zero
// exit status without -verify-diagnostics.

// RUN: rm -rf %t && split-file %s %t
// RUN: reshard-opt %t/no-pieces.mlir --convert-reshard-to-runtime -verify-diagnostics
// RUN: reshard-opt %t/digit.mlir --convert-reshard-to-runtime=plan-name=2refit -verify-diagnostics
// RUN: reshard-opt %t/dash.mlir --convert-reshard-to-runtime=plan-name=re-fit -verify-diagnostics
// RUN: reshard-opt %t/dot.mlir "--convert-reshard-to-runtime=plan-name=refit.v2" -verify-diagnostics
// RUN: reshard-opt %t/module-name.mlir --convert-reshard-to-runtime -verify-diagnostics
// RUN: reshard-opt %t/explicit.mlir --convert-reshard-to-runtime -verify-diagnostics
// RUN: reshard-opt %t/stale-schedule.mlir --convert-reshard-to-runtime -verify-diagnostics
// RUN: not reshard-opt %t/no-pieces.mlir --convert-reshard-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: error: 'reshard.redistribute' op is in no reshard.group; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --convert-reshard-to-runtime)
// A module name that is not a C identifier is fine once plan-name is given.
// RUN: reshard-opt %t/module-name.mlir --reshard-intersect --convert-reshard-to-runtime=plan-name=refit | FileCheck %s --check-prefix=RENAMED
// RENAMED: module @"refit-v2" {
// RENAMED-NEXT: reshard_rt.plan @refit num_ranks = 2

//--- no-pieces.mlir
// The first tensor is in a group; the second in none.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @planned from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.class @class0 of @planned rank 1 [
  box [0] size [2] dst 0 at [0] src 0 at [0],
  box [2] size [2] dst 0 at [2] src 1 at [0]
]
reshard.group @group0 class @class0 from @m to @m tensors [@planned]
// expected-error @+1 {{'reshard.redistribute' op is in no reshard.group; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --convert-reshard-to-runtime)}}
reshard.redistribute @unplanned from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>

//--- digit.mlir
// expected-error @+1 {{plan name '2refit' is not a C identifier; give the module a name that is, or set the plan name (reshard-compile --plan-name, reshard-opt convert-reshard-to-runtime{plan-name=...})}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- dash.mlir
// expected-error @+1 {{plan name 're-fit' is not a C identifier; give the module a name that is, or set the plan name (reshard-compile --plan-name, reshard-opt convert-reshard-to-runtime{plan-name=...})}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- dot.mlir
// expected-error @+1 {{plan name 'refit.v2' is not a C identifier; give the module a name that is, or set the plan name (reshard-compile --plan-name, reshard-opt convert-reshard-to-runtime{plan-name=...})}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- module-name.mlir
// No plan-name: the module's name is taken, and it is not a C identifier.
// expected-error @+1 {{plan name 'refit-v2' is not a C identifier; give the module a name that is, or set the plan name (reshard-compile --plan-name, reshard-opt convert-reshard-to-runtime{plan-name=...})}}
module @"refit-v2" {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- explicit.mlir
// The explicit pieces (reshard-expand's output) are for reading and for
// reshard-run's reference interpreter; the lowering takes classes and
// groups.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op is the explicit reference form (reshard-expand writes it); convert-reshard-to-runtime works on classes and groups: give it the module before reshard-expand}}
reshard.pieces @w rank 1 holders [[0], [1]] [
  box [0] size [2] from 0 at [0] to 0 at [0] group 0,
  box [2] size [2] from 1 at [0] to 0 at [2] group 1,
  box [0] size [2] from 0 at [0] to 1 at [0] group 0,
  box [2] size [2] from 1 at [0] to 1 at [2] group 1
]

//--- stale-schedule.mlir
// An all-gather over ranks 0, 1 makes two streams (0 -> 1 and 1 -> 0); the
// schedule, written for another routing, has one.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.class @class0 of @w rank 1 [
  box [0] size [2] dst 0 at [0] src 0 at [0],
  box [2] size [2] dst 0 at [2] src 1 at [0]
]
reshard.group @group0 class @class0 from @m to @m tensors [@w]
// expected-error @+1 {{'reshard.schedule' op has 1 streams but the plan's routing makes 2 (a different set); run reshard-schedule after the routing}}
reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
  stream 0 -> 1 phase 0 start 0 quota 64
]
