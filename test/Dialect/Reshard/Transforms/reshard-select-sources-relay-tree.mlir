// A relay tree: two engine replicas in domains 1 and 2 need what four
// trainer GPUs of domain 0 hold. With relay-tree=always the routes of the
// first group (@w) feed domain 2 from domain 1's entries (`from domain
// 1`), those of the second (@v) domain 1 from domain 2's: domain 0 sends
// each piece once, and the entries of the domain it enters first forward
// it over the network in relay streams that start after what they
// forward arrives. The domain met first rotates with the group, so that
// the feeders' work spreads over the replicas. The report
// counts the fed crossings; network bytes stay at the bound; both
// interpreters check every element. With relay-tree=never every domain is
// fed by the holders (and by default here too: the holders' NICs stay
// within the bound, so auto feeds nothing). Feeders that cannot be are
// refused.

// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-tree.mlir --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree=always" -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: reshard-opt %t.mlir | FileCheck %s
// CHECK: reshard.group @group0
// CHECK-NEXT: piece 0 network 2 holder 0 entry 0 from domain 1
// CHECK: reshard.group @group1
// CHECK-NEXT: piece 0 network 1 holder 0 entry 0 from domain 2
// CHECK: stream 4 -> 8 phase {{[1-9][0-9]*}} start {{[1-9][0-9]*}} quota
// CHECK: stream 5 -> 9 phase {{[1-9][0-9]*}} start {{[1-9][0-9]*}} quota

// RUN: reshard-opt %t.mlir --reshard-report=text -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: network bytes / lower bound: 1.000
// REPORT: relay tree: 6 crossings of a piece into a domain come from another domain's entries, 524288 B
// RUN: reshard-run %t.mlir --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-run %t.mlir --check --engine | FileCheck %s --check-prefix=EXEC
// EXEC: checked 2 tensors, 16 pieces, 524288 destination elements: all correct

// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-tree.mlir --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree=never" | FileCheck %s --check-prefix=NEVER
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-tree.mlir --reshard-plan-pipeline="lower=false staging-budget=65536" | FileCheck %s --check-prefix=NEVER
// NEVER-NOT: from domain

// A domain fed from itself, and from a domain the piece does not cross into.
// RUN: sed '0,/network 2 holder 0 entry 0 from domain 1/s//network 2 holder 0 entry 0 from domain 2/' %t.mlir | not reshard-opt -o /dev/null 2>&1 | FileCheck %s --check-prefix=SELF
// SELF: error: 'reshard.group' op a route of piece 0 is fed from domain 2; only a network route is fed, from another domain
// RUN: sed '0,/network 2 holder 0 entry 0 from domain 1/s//network 2 holder 0 entry 0 from domain 3/' %t.mlir | not reshard-opt --convert-reshard-to-runtime -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOT-NETWORK
// NOT-NETWORK: error: 'reshard.group' op feeds piece 0 into domain 2 from domain 3, but both must be domains the piece crosses the network into, and the feeder one its holders feed

// Lanes in a fed domain: rank 8 gets some pieces from holder 2 directly
// and others, of holder 0, from domain 1's entry 4. It forwards each to
// rank 9 in a stream of its own, the direct ones in lane 2 (phase 3) and
// the fed ones in lane R + 0 (phase 11, R = 10 ranks), each one step
// behind the stream that brings it, so neither waits for the other.
// RUN: reshard-opt %S/../../../Integration/mpi/Inputs/relay-tree-lanes.mlir --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree=always" -o %t.lanes.mlir
// RUN: FileCheck %s --check-prefix=LANES < %t.lanes.mlir
// LANES: stream 2 -> 8 phase 0 start 0 quota [[Q:[0-9]+]],
// LANES: stream 4 -> 8 phase 1 start 2 quota [[Q]],
// LANES: stream 8 -> 9 phase 3 start 2 quota [[Q]],
// LANES-NEXT: stream 8 -> 9 phase 11 start 4 quota [[Q]],
// LANES: ] {relay_lanes}
// RUN: reshard-run %t.lanes.mlir --check | FileCheck %s --check-prefix=LANES-EXEC
// RUN: reshard-run %t.lanes.mlir --check --engine | FileCheck %s --check-prefix=LANES-EXEC
// LANES-EXEC: checked 1 tensors, 16 pieces, 524288 destination elements: all correct
