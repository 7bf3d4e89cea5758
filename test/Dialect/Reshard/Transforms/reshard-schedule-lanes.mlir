// Relay lanes: eight trainer ranks of one domain each hold a slice of two
// tensors that both inference ranks (another domain) need whole. Each
// slice crosses the network once, to one of them (the entry), which
// forwards it to the other over NVLink. In one relay stream per receiver
// the entry would forward four holders' slices one after another while
// they arrive in parallel (a tail of steps after the last crossing); with
// lanes it forwards what each holder sent it in a stream of its own
// (phase 1 + the holder's rank), each one step or two behind its holder's
// stream. reshard-schedule tries lanes because the relays have a tail,
// and keeps them because the cost model says they are faster: the
// schedule says `relay_lanes`, the report says so, the lowered plan
// verifies (every relay byte after it arrived), and both interpreters
// check every element.

// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-lanes.mlir --reshard-plan-pipeline="lower=false staging-budget=4096" | FileCheck %s
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-lanes.mlir --reshard-plan-pipeline="lower=false staging-budget=4096" | reshard-opt | FileCheck %s
// CHECK: reshard.schedule staging_budget = 4096 max_ops_per_step = 1024 [
// CHECK: stream 8 -> 9 phase 1 start {{[12]}} quota
// CHECK: stream 8 -> 9 phase 3 start {{[12]}} quota
// CHECK: stream 8 -> 9 phase 5 start {{[12]}} quota
// CHECK: stream 8 -> 9 phase 7 start {{[12]}} quota
// CHECK: stream 9 -> 8 phase 2 start {{[12]}} quota
// CHECK: stream 9 -> 8 phase 8 start {{[12]}} quota
// CHECK-NEXT: ] {relay_lanes}

// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-lanes.mlir --reshard-plan-pipeline="lower=false staging-budget=4096" --reshard-report=text -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: network bytes / lower bound: 1.000
// REPORT: relay lanes: each relay forwards what each holder sent it in a stream of its own
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-lanes.mlir --reshard-plan-pipeline="lower=false staging-budget=4096" --reshard-report=json -o /dev/null | FileCheck %s --check-prefix=JSON
// JSON: "relay_lanes": true

// The lowered plan: relay sends in several phases to one peer, verified.
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-lanes.mlir --reshard-plan-pipeline="staging-budget=4096" | FileCheck %s --check-prefix=LOWERED
// LOWERED: reshard_rt.rank 8
// LOWERED: reshard_rt.send to 9 phase 1
// LOWERED-NEXT: reshard_rt.send to 9 phase 3

// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-lanes.mlir --reshard-plan-pipeline="lower=false staging-budget=4096" | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-lanes.mlir --reshard-plan-pipeline="lower=false staging-budget=4096" | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// EXEC: checked 2 tensors, 32 pieces, 65536 destination elements: all correct
