// reshard-translate --reshard-to-cpp errors: an unknown --backend or
// --reshard-cpp-emit value (checked before the input is read; names are
// case-sensitive), an input with two plans (one translation unit holds one
// plan), input nested deeper than 256 brackets (refused before parsing, so
// the parser's recursion cannot overflow the stack), a plan whose name
// cannot name C functions, a plan next to unlowered redistributions, and
// input that is not lowered (the translation only translates: a layout,
// JSON or MLIR, is reshard-compile's). Each fails with a non-zero status and
// writes no output file.

// RUN: rm -rf %t && split-file %s %t
// RUN: not reshard-translate --reshard-to-cpp --backend=gloo %t/plan.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=BACKEND
// RUN: not test -e %t/out.cpp
// BACKEND: error: --backend must be mpi or nccl, not 'gloo'
// RUN: not reshard-translate --reshard-to-cpp --backend=NCCL %t/plan.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=BACKEND-CASE
// BACKEND-CASE: error: --backend must be mpi or nccl, not 'NCCL'
// RUN: not reshard-translate --reshard-to-cpp --backend= %t/plan.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=BLANK-BACKEND
// BLANK-BACKEND: error: --backend must be mpi or nccl, not ''
// RUN: not reshard-translate --reshard-to-cpp --reshard-cpp-emit=object %t/plan.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT: error: --reshard-cpp-emit must be source or header, not 'object'
// RUN: not test -e %t/out.cpp

// RUN: not reshard-translate --reshard-to-cpp %t/two-plans.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: error: --reshard-to-cpp needs exactly one reshard_rt.plan
// RUN: not test -e %t/out.cpp

// RUN: %python -c "print('[' * 257 + ']' * 257)" > %t/deep.mlir
// RUN: not reshard-translate --reshard-to-cpp %t/deep.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: deep.mlir:1:257: error: brackets nest deeper than 256 levels; no reshard program needs that, refusing to parse
// RUN: not test -e %t/out.cpp
// 256 levels are not refused for depth (the parser then rejects the
// attribute as usual).
// RUN: %python -c "print('reshard_rt.plan @p num_ranks = 1 tensors = ' + '[' * 256 + ']' * 256 + ' fingerprint = 0 {}')" > %t/deep256.mlir
// RUN: not reshard-translate --reshard-to-cpp %t/deep256.mlir 2>&1 | FileCheck %s --check-prefix=DEEP256
// DEEP256-NOT: nest deeper
// DEEP256: error: 'reshard_rt.plan' op attribute 'tensors' failed to satisfy constraint: string array attribute

// An invalid plan is rejected by the plan verifier before any code is
// emitted.
// RUN: not reshard-translate --reshard-to-cpp %t/invalid-plan.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=VERIFY
// VERIFY: invalid-plan.mlir:11:5: error: 'reshard_rt.send' op is received by no reshard_rt.recv of rank 1
// RUN: not test -e %t/out.cpp

// The C functions are <plan>_run, ...: a plan name that is not a C
// identifier is refused for source and header alike (the planning pipeline
// checks the names it gives; a hand-written plan is checked here).
// RUN: not reshard-translate --reshard-to-cpp %t/plan-name.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=PLAN-NAME
// RUN: not reshard-translate --reshard-to-cpp --reshard-cpp-emit=header %t/plan-name.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=PLAN-NAME
// PLAN-NAME: plan-name.mlir:1:1: error: 'reshard_rt.plan' op name 'my-plan' is not a C identifier; the C functions are named after the plan
// RUN: not test -e %t/out.cpp

// A plan and unlowered redistributions in one module: translating the plan
// would silently drop the redistributions.
// RUN: not reshard-translate --reshard-to-cpp %t/mixed.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=MIXED
// MIXED: error: --reshard-to-cpp translates a lowered reshard_rt.plan, and this module also holds 'reshard.mesh'; lower it first (reshard-compile LAYOUT --backend=mpi|nccl does the whole compile, or reshard-opt --reshard-plan-pipeline)
// RUN: not test -e %t/out.cpp

// Unlowered input is refused, naming the driver; reshard-compile reports
// the planning pipeline's errors as reshard-opt would.
// RUN: not reshard-translate --reshard-to-cpp %t/bad-name.mlir -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=UNLOWERED
// UNLOWERED: bad-name.mlir:3:3: error: --reshard-to-cpp translates a lowered reshard_rt.plan, and this module also holds 'reshard.mesh'; lower it first (reshard-compile LAYOUT --backend=mpi|nccl does the whole compile, or reshard-opt --reshard-plan-pipeline)
// RUN: not test -e %t/out.cpp
// RUN: not reshard-compile %t/bad-name.mlir --backend=mpi -o %t/out.cpp 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: bad-name.mlir:2:1: error: plan name 'refit-v2' is not a C identifier
// RUN: not test -e %t/out.cpp
// A layout JSON is refused with the same advice.
// RUN: printf '{"meshes": {}, "tensors": []}' > %t/layout.json
// RUN: not reshard-translate --reshard-to-cpp %t/layout.json 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: error: {{.*}}layout.json is a layout JSON; --reshard-to-cpp translates a lowered reshard_rt.plan. Compile the layout with reshard-compile LAYOUT --backend=mpi|nccl

//--- plan.mlir
reshard_rt.plan @p num_ranks = 1 tensors = [] fingerprint = 0 {
}

//--- two-plans.mlir
reshard_rt.plan @a num_ranks = 1 tensors = [] fingerprint = 0 {
}
reshard_rt.plan @b num_ranks = 1 tensors = [] fingerprint = 0 {
}

//--- plan-name.mlir
reshard_rt.plan @"my-plan" num_ranks = 1 tensors = [] fingerprint = 0 {
}

//--- mixed.mlir
reshard_rt.plan @p num_ranks = 1 tensors = [] fingerprint = 0 {
}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>

//--- invalid-plan.mlir
// Rank 0 sends to rank 1, which receives nothing.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

//--- bad-name.mlir
// No plan-name here: the module's name is taken.
module @"refit-v2" {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
  reshard.redistribute @w from @m <[[tp]]> to @m <[[]]>
      : tensor<4xf32> -> tensor<4xf32>
}
