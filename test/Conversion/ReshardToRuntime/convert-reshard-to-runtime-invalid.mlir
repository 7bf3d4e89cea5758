// convert-reshard-to-runtime errors: a redistribution without its piece
// table (the planning passes have not run), plan names that cannot name C
// functions (<name>_run, ...), whether given by plan-name or taken from the
// module's name, and hand-written tables whose relay forwards a box it did
// not receive whole (an error at the table, where it used to crash). Option
// and name errors are reported at the module, so those cases spell out
// `module`. The pass fails: a non-zero exit status without
// -verify-diagnostics.

// RUN: rm -rf %t && split-file %s %t
// RUN: reshard-opt %t/no-pieces.mlir --convert-reshard-to-runtime -verify-diagnostics
// RUN: reshard-opt %t/digit.mlir --convert-reshard-to-runtime=plan-name=2refit -verify-diagnostics
// RUN: reshard-opt %t/dash.mlir --convert-reshard-to-runtime=plan-name=re-fit -verify-diagnostics
// RUN: reshard-opt %t/dot.mlir "--convert-reshard-to-runtime=plan-name=refit.v2" -verify-diagnostics
// RUN: reshard-opt %t/module-name.mlir --convert-reshard-to-runtime -verify-diagnostics
// RUN: reshard-opt %t/relay-sub-box.mlir --convert-reshard-to-runtime -verify-diagnostics
// RUN: reshard-opt %t/relay-inner-box.mlir --convert-reshard-to-runtime -verify-diagnostics
// RUN: not reshard-opt %t/no-pieces.mlir --convert-reshard-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=FAIL
// FAIL: error: 'reshard.redistribute' op has no reshard.pieces table; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --convert-reshard-to-runtime)
// A module name that is not a C identifier is fine once plan-name is given.
// RUN: reshard-opt %t/module-name.mlir --reshard-intersect --convert-reshard-to-runtime=plan-name=refit | FileCheck %s --check-prefix=RENAMED
// RENAMED: module @"refit-v2" {
// RENAMED-NEXT: reshard_rt.plan @refit num_ranks = 2

//--- no-pieces.mlir
// The first tensor has its table; the second has none.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @planned from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.pieces @planned rank 1 holders [[0], [1]] [
  box [0] size [2] from 0 at [0] to 0 at [0] group 0,
  box [2] size [2] from 1 at [0] to 0 at [2] group 1,
  box [0] size [2] from 0 at [0] to 1 at [0] group 0,
  box [2] size [2] from 1 at [0] to 1 at [2] group 1
]
// expected-error @+1 {{'reshard.redistribute' op has no reshard.pieces table; plan the module first (--reshard-plan-pipeline=lower=false, or --reshard-intersect before --convert-reshard-to-runtime)}}
reshard.redistribute @unplanned from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>

//--- digit.mlir
// expected-error @+1 {{plan name '2refit' is not a C identifier; give the module a name that is, or set convert-reshard-to-runtime{plan-name=...} (reshard-opt)}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- dash.mlir
// expected-error @+1 {{plan name 're-fit' is not a C identifier; give the module a name that is, or set convert-reshard-to-runtime{plan-name=...} (reshard-opt)}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- dot.mlir
// expected-error @+1 {{plan name 'refit.v2' is not a C identifier; give the module a name that is, or set convert-reshard-to-runtime{plan-name=...} (reshard-opt)}}
module {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- module-name.mlir
// No plan-name: the module's name is taken, and it is not a C identifier.
// expected-error @+1 {{plan name 'refit-v2' is not a C identifier; give the module a name that is, or set convert-reshard-to-runtime{plan-name=...} (reshard-opt)}}
module @"refit-v2" {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}

//--- relay-sub-box.mlir
// The relay.mlir layout of convert-reshard-to-runtime.mlir: rank 6
// receives [0:2, 2:4] and forwards it to 7 in two rows. Row 0 starts where
// the relay's box starts but is smaller (piece 3).
reshard.mesh @src shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @dst shape = [2, 2] axes = ["tp", "dp"] ranks = [4, 5, 6, 7]
reshard.redistribute @w from @src <[[], []]> to @dst <[[], [tp]]>
    : tensor<2x4xf32> -> tensor<2x4xf32>
// expected-error @+1 {{'reshard.pieces' op piece 3: relay rank 6 does not receive this box}}
reshard.pieces @w rank 2 holders [[0]] [
  box [0, 0] size [2, 2] from 0 at [0, 0] to 4 at [0, 0] group 0,
  box [0, 0] size [2, 2] from 0 at [0, 0] to 5 at [0, 0] group 0 via 4 step 1,
  box [0, 2] size [2, 2] from 0 at [0, 2] to 6 at [0, 0] group 0,
  box [0, 2] size [1, 2] from 0 at [0, 2] to 7 at [0, 0] group 0 via 6 step 1,
  box [1, 2] size [1, 2] from 0 at [1, 2] to 7 at [1, 0] group 0 via 6 step 2
]

//--- relay-inner-box.mlir
// Row 0 goes to 7 directly; row 1 is forwarded by rank 6, which received
// no box starting at [1, 2] (piece 4).
reshard.mesh @src shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @dst shape = [2, 2] axes = ["tp", "dp"] ranks = [4, 5, 6, 7]
reshard.redistribute @w from @src <[[], []]> to @dst <[[], [tp]]>
    : tensor<2x4xf32> -> tensor<2x4xf32>
// expected-error @+1 {{'reshard.pieces' op piece 4: relay rank 6 does not receive this box}}
reshard.pieces @w rank 2 holders [[0]] [
  box [0, 0] size [2, 2] from 0 at [0, 0] to 4 at [0, 0] group 0,
  box [0, 0] size [2, 2] from 0 at [0, 0] to 5 at [0, 0] group 0 via 4 step 1,
  box [0, 2] size [2, 2] from 0 at [0, 2] to 6 at [0, 0] group 0,
  box [0, 2] size [1, 2] from 0 at [0, 2] to 7 at [0, 0] group 0,
  box [1, 2] size [1, 2] from 0 at [1, 2] to 7 at [1, 0] group 0 via 6 step 1
]
