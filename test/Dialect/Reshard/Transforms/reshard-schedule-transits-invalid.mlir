// Transits that cannot be: rows that do not name three ranks, out of
// order or not rows of 3 (the schedule op's verifier); a transit within one
// domain, through a rank in no mesh, with a second stream that does not
// follow the first by one step, or one that reroutes a stream the routing
// does not make (when the plan loads); and, in the lowered plan, a transit's two
// streams that do not match or do not name each other (the runtime
// plan's verifier). The planned and lowered modules of the working
// example (reshard-schedule-transits.mlir) are edited with sed.

// RUN: reshard-opt %s -split-input-file -verify-diagnostics

// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --reshard-plan-pipeline="lower=false staging-budget=262144" -o %t.planned.mlir
// RUN: sed 's/3 -> 7 via 4/6 -> 7 via 5/' %t.planned.mlir | not reshard-opt --convert-reshard-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=DOMAIN
// DOMAIN: error: 'reshard.schedule' op routes the stream 6 -> 7 through rank 5, but a transit joins two NVLink domains and is a GPU of one of them (ranks 6, 7 and 5 are in domains 1, 1 and 1)
// RUN: sed 's/3 -> 7 via 4/3 -> 7 via 8/' %t.planned.mlir | not reshard-opt --convert-reshard-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-MESH
// NO-MESH: error: 'reshard.schedule' op routes the stream 3 -> 7 through rank 8, which is in no mesh of the plan; a transit is a GPU that runs the plan
// RUN: sed 's/stream 4 -> 7 phase 4294967299 start 1/stream 4 -> 7 phase 4294967299 start 2/' %t.planned.mlir | not reshard-opt --convert-reshard-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLANNED-LATE
// PLANNED-LATE: error: 'reshard.schedule' op routes the stream 3 -> 7 through 4, whose second stream must start one step after the first at the same quota (starts 0 and 2, quotas
// RUN: sed 's/2 -> 6 via 5/2 -> 4 via 5/' %t.planned.mlir | not reshard-opt --reshard-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=STALE
// STALE: error: 'reshard.schedule' op routes the stream 2 -> 4 through 5, but the plan's routing sends nothing from rank 2 to rank 4; run reshard-schedule after the routing

// RUN: reshard-opt %t.planned.mlir --convert-reshard-to-runtime -o %t.lowered.mlir
// RUN: sed 's/phase 4294967299 start 1/phase 4294967299 start 2/' %t.lowered.mlir | not reshard-opt -o /dev/null 2>&1 | FileCheck %s --check-prefix=LATE
// LATE: error: 'reshard_rt.send' op is one of a transit's two streams (rank 3 to 4 to 7), which need the same items, bytes and quota, the second starting one step after the first (start 0 and 2, quota
// RUN: sed 's/phase 2147483655/phase 2147483654/' %t.lowered.mlir | not reshard-opt -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNPAIRED
// UNPAIRED: error: 'reshard_rt.send' op sends rank 6 through rank 4, which forwards nothing to it; a transit's two streams name each other's far end

// expected-error @+1 {{'reshard.schedule' op transit 0 (0 -> 1 via 1) is malformed: three different ranks}}
reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
  stream 0 -> 1 phase 2147483649 start 0 quota 64
] transits [0 -> 1 via 1]

// -----

// expected-error @+1 {{'reshard.schedule' op transit 1 does not follow transit 0; transits are sorted by (sender, receiver), one each}}
reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
] transits [2 -> 3 via 4, 0 -> 3 via 4]

// -----

// expected-error @+1 {{'reshard.schedule' op transits hold 2 integers, not rows of 3}}
"reshard.schedule"() {staging_budget = 64 : i64, max_ops_per_step = 1024 : i64,
                      streams = array<i64>, transits = array<i64: 0, 1>} : () -> ()

// -----

// expected-error @+1 {{'reshard.schedule' op stream 0 (0 -> 1) is malformed: two different ranks, a phase of at least 0, a start of 0 to 4194303 (a rank takes at most 2^22 steps) and a quota of 1 to the staging budget}}
reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
  stream 0 -> 1 phase 6442450943 start 0 quota 64
]

// -----

// A start past the steps a rank may take (the report would wrap its end).
// expected-error @+1 {{'reshard.schedule' op stream 0 (0 -> 2) is malformed: two different ranks, a phase of at least 0, a start of 0 to 4194303}}
reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
  stream 0 -> 2 phase 0 start 9223372036854775807 quota 64
]
