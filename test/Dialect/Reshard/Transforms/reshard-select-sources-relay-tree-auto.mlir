// relay-tree=auto, the default: two trainer GPUs of domain 0 hold a
// tensor that three engine replicas need, in domains 1, 2 and 3. From the
// holders alone their NICs would carry it three times, over the physical
// bound per NIC, so domain 2 is fed from domain 1's entries (as bound
// does). Where the plan would then pass relay-tree-max-streams streams the
// pass keeps the holders' routes and says why in a remark.

// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536" -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// CHECK: piece 0 network 2 holder 0 entry 0 from domain 1
// CHECK: stream 4 -> 8 phase {{[1-9][0-9]*}} start {{[1-9][0-9]*}} quota
// RUN: reshard-opt %t.mlir --reshard-report=text -o /dev/null | FileCheck %s --check-prefix=REPORT
// REPORT: network bytes / lower bound: 1.000; busiest NIC / bound: 2.000
// REPORT: relay tree: 2 crossings of a piece into a domain come from another domain's entries, 524288 B
// Per class: domain 2's third comes from domain 1's entries.
// REPORT: {{^}} 0 1 0 0 1048576 0 0 524288 relay tree w{{$}}
// RUN: reshard-run %t.mlir --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-run %t.mlir --check --engine | FileCheck %s --check-prefix=EXEC
// EXEC: checked 1 tensors, 6 pieces, 393216 destination elements: all correct

// With at most 5 streams the tree (6 streams) is dropped.
// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree-max-streams=5" 2>&1 | FileCheck %s --check-prefix=DROPPED
// DROPPED: remark: reshard-select-sources: no relay tree: with one the plan would have 6 streams (relay lanes, before transits; 6 with lanes of 8 ranks), over the 5 relay-tree=auto allows (relay-tree-max-streams; bound keeps it)
// DROPPED-NOT: from domain
// DROPPED: reshard.schedule
// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree-max-streams=5" --reshard-report=text -o /dev/null 2>&1 | FileCheck %s --check-prefix=DROPPED-REPORT
// DROPPED-REPORT: busiest NIC / bound: 3.000
// DROPPED-REPORT-NOT: relay tree:
// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree=bound relay-tree-max-streams=5" | FileCheck %s --check-prefix=BOUND
// BOUND: from domain 1
// RUN: reshard-opt %s --reshard-plan-pipeline="lower=false staging-budget=65536 relay-tree=never" | FileCheck %s --check-prefix=NEVER
// NEVER-NOT: from domain
// NEVER: reshard.schedule
// The same layout as one line of JSON through reshard-compile: the remark
// names the file at line 0 and quotes none of it.
// RUN: printf '{"meshes": {"train": {"shape": [2], "axes": ["tp"], "ranks": [0, 1]}, "infer": {"shape": [3, 2], "axes": ["dp", "tp"], "ranks": [4, 5, 8, 9, 12, 13]}}, "topology": {"gpus_per_node": 4, "nvl_domain_size": 4, "nic_GBps_per_gpu": 50, "nvlink_GBps_per_gpu": 450}, "tensors": [{"name": "w", "shape": [256, 512], "dtype": "fp32", "src": {"mesh": "train", "dims": [["tp"], []]}, "dst": {"mesh": "infer", "dims": [["tp"], []]}}]}' > %t.json
// RUN: reshard-compile %t.json --emit=none --relay-tree-max-streams=5 2>&1 | FileCheck %s --check-prefix=JSON --implicit-check-not=meshes
// JSON: .json:0:0: remark: reshard-select-sources: no relay tree: with one the plan would have 6 streams
// RUN: not reshard-opt %s --reshard-plan-pipeline="relay-tree-max-streams=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: error: reshard-select-sources: relay-tree-max-streams is -1; it must be at least 0

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @infer shape = [3, 2] axes = ["dp", "tp"] ranks = [4, 5, 8, 9, 12, 13]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[tp], []]> topology @t
    : tensor<256x512xf32> -> tensor<256x512xf32>
