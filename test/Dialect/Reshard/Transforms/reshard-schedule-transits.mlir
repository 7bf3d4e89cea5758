// Transits: NVLink domain 1 (ranks 4-7) holds two source GPUs (4, 5) and
// both destinations (6, 7). Without transits everything domain 0 holds
// enters domain 1 through the NICs of 6 and 7; reshard-schedule moves two
// of the four holder streams onto the NICs of 4 and 5, which forward them
// over NVLink one step later at the same quota (phase 2^31 + receiver
// into the transit, 2^32 + sender out of it), and keeps them because the
// cost model says the plan is faster. The schedule lists them, the report
// counts them, the lowered plan verifies (the transit's two streams match,
// its workspace keeps one step), and both interpreters check every
// element.

// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --reshard-plan-pipeline="lower=false staging-budget=262144" | FileCheck %s
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --reshard-plan-pipeline="lower=false staging-budget=262144" | reshard-opt | FileCheck %s
// CHECK: reshard.schedule staging_budget = 262144 max_ops_per_step = 1024 [
// CHECK: stream 2 -> 5 phase 2147483654 start 0 quota [[Q:[0-9]+]],
// CHECK: stream 3 -> 4 phase 2147483655 start 0 quota [[Q]],
// CHECK: stream 4 -> 7 phase 4294967299 start 1 quota [[Q]],
// CHECK: stream 5 -> 6 phase 4294967298 start 1 quota [[Q]],
// CHECK: ] transits [
// CHECK-NEXT: 2 -> 6 via 5,
// CHECK-NEXT: 3 -> 7 via 4
// CHECK-NEXT: ]

// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --reshard-plan-pipeline="lower=false staging-budget=262144" --reshard-report=text -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: network bytes / lower bound: 1.000; busiest NIC / bound: 1.000
// REPORT: transits: 2 holder streams enter their receiver's domain and 0 leave their sender's through another GPU of it, 1572864 B
// Per class: half of what crosses the network passes a transit.
// REPORT: {{^}} 0 1 0 0 1048576 1048576 2097152 0 direct + transits w{{$}}
// REPORT: {{^}} 1 1 0 0 524288 524288 1048576 0 direct + transits v{{$}}
// REPORT: {{^}} 2 1 0 512 0 0 0 0 nvlink u{{$}}
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --reshard-plan-pipeline="lower=false staging-budget=262144" --reshard-report=json -o /dev/null | FileCheck %s --check-prefix=JSON
// JSON: "transits": {
// JSON-NEXT: "bytes": 1572864,
// JSON-NEXT: "entering": 2,
// JSON-NEXT: "leaving": 0

// Without transits the busiest NIC takes twice the bound.
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --pass-pipeline="builtin.module(reshard-intersect,reshard-select-sources,reshard-schedule{staging-budget=262144 transits=never},reshard-report{format=text})" -o /dev/null | FileCheck %s --check-prefix=NEVER
// NEVER: busiest NIC / bound: 2.000
// NEVER-NOT: transits:
// A module routed direct (the direct plan) gets none at transits=auto,
// from the pass itself, and some at transits=always.
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --pass-pipeline="builtin.module(reshard-intersect,reshard-select-sources{strategy=direct},reshard-schedule{staging-budget=262144},reshard-report{format=text})" -o /dev/null | FileCheck %s --check-prefix=DIRECT-AUTO
// DIRECT-AUTO: speedup:
// DIRECT-AUTO-NOT: transits:
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --pass-pipeline="builtin.module(reshard-intersect,reshard-select-sources{strategy=direct},reshard-schedule{staging-budget=262144 transits=always},reshard-report{format=text})" -o /dev/null | FileCheck %s --check-prefix=DIRECT-ALWAYS
// DIRECT-ALWAYS: transits:

// The lowered plan: rank 4 forwards what rank 3 sends it, and keeps one
// step of it after its staging.
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --reshard-plan-pipeline="staging-budget=262144" | FileCheck %s --check-prefix=LOWERED
// LOWERED: reshard_rt.rank 4 workspace = [[W:[0-9]+]] {
// LOWERED-NEXT: reshard_rt.send to 6 phase 0
// LOWERED-NEXT: reshard_rt.send to 7 phase 0
// LOWERED-NEXT: reshard_rt.send to 7 phase 4294967299 start 1 quota [[Q:[0-9]+]] bytes 786432
// LOWERED-NEXT: reshard_rt.recv from 3 phase 2147483655 start 0 quota [[Q]] bytes 786432

// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --reshard-plan-pipeline="lower=false staging-budget=262144" | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --reshard-plan-pipeline="lower=false staging-budget=262144" | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// EXEC: checked 3 tensors, 20 pieces, 2097280 destination elements: all correct

// RUN: not reshard-opt %S/../../../Integration/mpi/Inputs/transits.mlir --pass-pipeline="builtin.module(reshard-intersect,reshard-select-sources,reshard-schedule{transits=sometimes})" 2>&1 | FileCheck %s --check-prefix=OPTION
// OPTION: for the --transits option: Cannot find option named 'sometimes'

// Exit transits (transits=always): in Inputs/transits-exit.mlir two GPUs
// of the holders' domain that hold only a small tensor send holder
// streams on their NICs; both interpreters check every element.
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/transits-exit.mlir --reshard-plan-pipeline="lower=false staging-budget=262144 transits=always" -o %t.exit.mlir
// RUN: reshard-opt %t.exit.mlir --reshard-report=text -o /dev/null | FileCheck %s --check-prefix=EXIT
// EXIT: busiest NIC / bound: 1.000
// EXIT: transits: 0 holder streams enter their receiver's domain and 2 leave their sender's through another GPU of it, 1572864 B (chosen by reshard-schedule)
// RUN: reshard-run %t.exit.mlir --check | FileCheck %s --check-prefix=EXIT-EXEC
// RUN: reshard-run %t.exit.mlir --check --engine | FileCheck %s --check-prefix=EXIT-EXEC
// EXIT-EXEC: checked 3 tensors, 16 pieces, 1048832 destination elements: all correct
