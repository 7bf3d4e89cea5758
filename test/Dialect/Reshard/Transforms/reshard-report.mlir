// reshard-report: bytes per link class, the busiest NIC, the lower bounds,
// the estimated time and the two baselines, as text and as JSON, to
// standard output or to a file; the IR passes through unchanged. Every
// figure is worked out by hand below from docs/CostModel.md (and the
// formulas in lib/Plan/CostModel.cpp) for small plans whose routes the
// reshard-select-sources rules fix. Seconds are checked exactly in the text
// report (printf %e) and by pattern in JSON (17 significant digits carry
// the rounding of the sums).

// RUN: rm -rf %t && split-file %s %t

// The routed plan: text, then JSON without and with the per-rank table.
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-select-sources --reshard-schedule --reshard-report -o /dev/null | FileCheck %s --check-prefixes=TEXT,TEXT-RANKS
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-select-sources --reshard-schedule --reshard-report=per-rank=false -o /dev/null | FileCheck %s --check-prefixes=TEXT,NO-RANKS
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-select-sources --reshard-schedule --reshard-report="format=json per-rank=false" -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-select-sources --reshard-schedule --reshard-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON-RANKS
// The plan the report describes is the one that executes correctly.
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-select-sources --reshard-schedule | reshard-run - --check | FileCheck %s --check-prefix=EXEC-REFIT

// Any stage after reshard-intersect: the unrouted plan is the direct one.
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-report=per-rank=false -o /dev/null | FileCheck %s --check-prefix=UNROUTED

// output=<file>: the report goes there, nothing else to standard output,
// and the IR is the same as without the pass.
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-select-sources --reshard-report="format=json output=%t/report.json" -o /dev/null | count 0
// RUN: FileCheck %s --check-prefix=JSON-RANKS < %t/report.json
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-select-sources --reshard-report=output=%t/report.txt -o %t/with-report.mlir
// RUN: FileCheck %s --check-prefixes=TEXT,TEXT-RANKS < %t/report.txt
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-select-sources -o %t/without-report.mlir
// RUN: diff %t/with-report.mlir %t/without-report.mlir

// The short forms, as issue #4 spells them: --reshard-report=json|text. With
// the report on standard output and no -o, standard output is the report
// alone. reshard-plan-pipeline (lower=false) plans as the three passes do.
// RUN: reshard-opt %t/refit.mlir --reshard-plan-pipeline=lower=false --reshard-report=json > %t/auto.json
// RUN: %python -c "import json; d = json.load(open('%t/auto.json')); print(d['network_bytes'], d['lower_bound_network_bytes'])" | FileCheck %s --check-prefix=AUTO
// AUTO: 8000 8000
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-select-sources --reshard-schedule --reshard-report=format=json -o /dev/null > %t/explicit.json
// RUN: diff %t/auto.json %t/explicit.json
// RUN: reshard-opt %t/refit.mlir --reshard-plan-pipeline=lower=false --reshard-report=text | FileCheck %s --check-prefixes=TEXT,TEXT-RANKS
// The pipeline's staging budget is reshard-schedule's.
// RUN: reshard-opt %t/refit.mlir --reshard-plan-pipeline="lower=false staging-budget=1024" --reshard-report=json > %t/auto-1k.json
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=1024 --reshard-report=json -o /dev/null > %t/explicit-1k.json
// RUN: diff %t/auto-1k.json %t/explicit-1k.json
// RUN: not diff %t/auto.json %t/auto-1k.json > /dev/null
// reshard-compile writes the same report.
// RUN: reshard-compile %t/refit.mlir --report=%t/compiled.json --emit=none
// RUN: diff %t/auto.json %t/compiled.json
// RUN: reshard-compile %t/refit.mlir --report=- > %t/compiled-stdout.json
// RUN: diff %t/auto.json %t/compiled-stdout.json
// The decision is made on what the passes printed, not on the command line:
// -o in a response file keeps the IR; an option that merely names the pass
// (or a report into a file) leaves the IR on standard output.
// RUN: echo "-o %t/rsp.mlir" > %t/args.rsp
// RUN: reshard-opt %t/refit.mlir --reshard-plan-pipeline=lower=false --reshard-report=json @%t/args.rsp > %t/rsp.json
// RUN: diff %t/auto.json %t/rsp.json
// RUN: reshard-opt %t/refit.mlir --reshard-plan-pipeline=lower=false -o %t/ir-plain.mlir
// RUN: diff %t/rsp.mlir %t/ir-plain.mlir
// RUN: reshard-opt %t/refit.mlir --reshard-intersect --mlir-print-ir-before=reshard-report --reshard-report=output=%t/to-file.txt 2>/dev/null | FileCheck %s --check-prefix=IR-KEPT
// IR-KEPT: reshard.group
// Reports of nested modules (run in parallel) come out whole, one each.
// RUN: reshard-opt %t/nested.mlir '--pass-pipeline=builtin.module(builtin.module(reshard-plan-pipeline{lower=false},reshard-report{per-rank=false}))' | FileCheck %s --check-prefix=NESTED
// NESTED-COUNT-2: reshard report: 1 tensors
// NESTED-NOT: reshard report

// With -o, the IR goes there and the report still to standard output.
// RUN: reshard-opt %t/refit.mlir --reshard-plan-pipeline=lower=false --reshard-report=json -o %t/ir.mlir > %t/with-o.json
// RUN: diff %t/auto.json %t/with-o.json
// RUN: reshard-opt %t/refit.mlir --reshard-plan-pipeline=lower=false -o %t/ir-without.mlir
// RUN: diff %t/ir.mlir %t/ir-without.mlir

// Local copies, and a plan without a topology.
// RUN: reshard-opt %t/local.mlir --reshard-intersect --reshard-select-sources --reshard-report -o /dev/null | FileCheck %s --check-prefix=LOCAL
// RUN: reshard-opt %t/local.mlir --reshard-intersect --reshard-select-sources --reshard-report=format=json -o /dev/null | FileCheck %s --check-prefix=LOCAL-JSON
// RUN: reshard-opt %t/no-topology.mlir --reshard-intersect --reshard-select-sources --reshard-report -o /dev/null | FileCheck %s --check-prefix=NO-TOPO
// RUN: reshard-opt %t/no-topology.mlir --reshard-intersect --reshard-select-sources --reshard-report=format=json -o /dev/null | FileCheck %s --check-prefix=NO-TOPO-JSON

//--- refit.mlir
// Domains of 2; NIC 1 GB/s with 5 us, NVLink 10 GB/s with 1 us (defaults).
// 1000 x f32 = 4000 B. Source [2, 2] (dp, tp) on ranks 0-3: tp0 = [0, 500)
// held by {0, 2}, tp1 = [500, 1000) held by {1, 3}; 2000 B each. Ranks 0, 1
// are domain 0, ranks 2, 3 domain 1. Destination dp = 3 on ranks 4, 5
// (domain 2) and 6 (domain 3), all replicated: 6 pieces of 2000 B.
//
// Selection (four network groups of 2000 B, in input order):
//   domain 2 [0]:   entry 4 (NIC in equal), from 0; 5 via 4 step 1.
//   domain 2 [500]: entry 5 (4 has 2000 in), from 1; 4 via 5 step 1.
//   domain 3 [0]:   entry 6, from 2 (0 has sent 2000).
//   domain 3 [500]: entry 6, from 3 (1 has sent 2000).
// The default schedule keeps this: step 0 the crossings, step 1 forwards.
//
// Plan: network 0->4, 1->5, 2->6, 3->6 = 8000 B in 4 messages; NVLink 4->5,
// 5->4 = 4000 B in 2; no local copies. NIC out 2000 on each of 0-3, the
// busiest the lowest, 0. NIC in 4: 2000, 5: 2000, 6: 4000 -> 6, 4000.
// Step 0: slowest link 6's NIC in, 5 us + 4000 B / 1 GB/s = 9 us.
// Step 1: NVLink out and in of 4 and 5, 1 us + 2000 B / 10 GB/s = 1.2 us.
// Estimated 10.2 us, 2 steps.
//
// Direct: every piece from 0 ([0]) or 1 ([500]): 6 network messages,
// 12000 B; NIC out 0 = 1 = 6000 -> 0; NIC in 4 = 5 = 6 = 4000 -> 4. One
// step: 5 us + 6000 B / 1 GB/s = 11 us.
// Gather-broadcast: root 0 (lowest source rank) lacks tp1, gets it from 1
// (lowest holder) over NVLink in step 0: 2000 B, 1 us + 0.2 us = 1.2 us; in
// step 1 sends 4000 B to each of 4, 5, 6: 12000 B network, 3 messages,
// 5 us + 12 us = 17 us. NIC out 0 = 12000; NIC in 4 = 5 = 6 = 4000 -> 4.
// Total 18.2 us, 2 steps.
//
// Lower bounds: domain 2 needs both halves (4000 B), domain 3 too (4000 B),
// no source rank in either: 8000 network bytes. Busiest NIC: ingress of
// domain 2 over its plan GPUs 4, 5: 2000; of domain 3 over 6 (7 is no
// plan GPU): 4000, 5 us + 4 us = 9 us; no egress term (every box is held
// in two domains); 8000 B over the 7 plan GPUs: 1143, 6.143 us; the most
// one rank lacks, 4000 B (ranks 4, 5, 6; the lowest is named) at 11 GB/s
// after 1 us: 1.364 us. Bound 4000 B per NIC, 9 us, set by the ingress.
//
// Ratios: network 8000 / 8000 = 1; busiest NIC 4000 / 4000 = 1; time
// 10.2 / 9 = 1.133; speedup 11 / 10.2 = 1.08x over direct, 18.2 / 10.2 =
// 1.78x over gather-broadcast.
//
// Unrouted (intersect only: lowest holder, one step) = direct: 12000 B,
// busiest 6000, 11 us; ratios 12000 / 8000 = 1.5, 6000 / 4000 = 1.5,
// 11 / 9 = 1.222; 1.00x over direct, 18.2 / 11 = 1.65x over
// gather-broadcast.

reshard.topology @t gpus_per_node = 2 nvl_domain_size = 2
    nvlink_GBps_per_gpu = 10.0 nic_GBps_per_gpu = 1.0
reshard.mesh @train shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
reshard.mesh @infer shape = [3] axes = ["dp"] ranks = [4, 5, 6]
reshard.redistribute @w from @train <[[tp]]> to @infer <[[]]> topology @t
    : tensor<1000xf32> -> tensor<1000xf32>

// Columns: network B, NVLink B, local B, busiest NIC B, steps, est. s.
// TEXT:      {{^}}reshard report: 1 tensors, 6 pieces (1 classes, 1 groups){{$}}
// TEXT-NEXT: {{^}}topology: 2 GPUs/node, NVLink domains of 2, NIC 1.00 GB/s, NVLink 10.00 GB/s per GPU{{$}}
// TEXT-NEXT: {{^}}plan network B nvlink B local B busiest NIC B steps est. s{{$}}
// TEXT-NEXT: {{^}}reshard 8000 4000 0 4000 2 1.020000e-05{{$}}
// TEXT-NEXT: {{^}}direct 12000 0 0 6000 1 1.100000e-05{{$}}
// TEXT-NEXT: {{^}}gather-broadcast 12000 2000 0 12000 2 1.820000e-05{{$}}
// TEXT-NEXT: {{^}}lower bound 8000 4000 9.000000e-06{{$}}
// TEXT-NEXT: {{^}}network bytes / lower bound: 1.000; busiest NIC / bound: 1.000; estimated / lower-bound time: 1.133{{$}}
// TEXT-NEXT: {{^}}bound terms: domain ingress 9.000000e-06 s (domain 3, 4000 B over 1 NIC); domain egress none; all network 6.143000e-06 s (8000 B over 7 NICs); GPU receive 1.363636e-06 s (rank 4, 4000 B over NIC + NVLink); binding: domain_ingress{{$}}
// TEXT-NEXT: {{^}}speedup: 1.08x over direct, 1.78x over gather-broadcast{{$}}
// Routes per class: the 8000 B that cross the network come from holders,
// and the entries forward 4000 B over NVLink.
// TEXT-NEXT: {{^}}routes per class (B reaching destinations: local copy, NVLink from a holder, network from a holder, through a transit, relayed by the domain's entry, from another domain's entry) and the algorithm that makes them:{{$}}
// TEXT-NEXT: {{^}} class tensors copy nvlink network transit relayed relay tree algorithm e.g.{{$}}
// TEXT-NEXT: {{^}} 0 1 0 0 8000 0 4000 0 direct w{{$}}
// Per rank: local, NVLink out, NVLink in, network out, network in, network
// messages (sent plus received).
// TEXT-RANKS-NEXT: {{^}} rank local B nvlink out B nvlink in B net out B net in B net msgs{{$}}
// TEXT-RANKS-NEXT: {{^}} 0 0 0 0 2000 0 1{{$}}
// TEXT-RANKS-NEXT: {{^}} 1 0 0 0 2000 0 1{{$}}
// TEXT-RANKS-NEXT: {{^}} 2 0 0 0 2000 0 1{{$}}
// TEXT-RANKS-NEXT: {{^}} 3 0 0 0 2000 0 1{{$}}
// TEXT-RANKS-NEXT: {{^}} 4 0 2000 2000 0 2000 1{{$}}
// TEXT-RANKS-NEXT: {{^}} 5 0 2000 2000 0 2000 1{{$}}
// TEXT-RANKS-NEXT: {{^}} 6 0 0 0 0 4000 2{{$}}
// TEXT-RANKS-NOT: {{.}}
// NO-RANKS-NOT: rank

// JSON keys come sorted. Every line is checked, so per-rank=false leaves no
// per_rank list in "plan" nor in the baselines; each baseline has its
// ratios to the plan's bounds.
// JSON:      {{^}}{{[{]$}}
// JSON-NEXT:   "baselines": {
// JSON-NEXT:     "direct": {
// JSON-NEXT:       "busiest_nic_bytes": 6000,
// JSON-NEXT:       "busiest_nic_in_bytes": 4000,
// JSON-NEXT:       "busiest_nic_in_rank": 4,
// JSON-NEXT:       "busiest_nic_out_bytes": 6000,
// JSON-NEXT:       "busiest_nic_out_rank": 0,
// JSON-NEXT:       "estimated_seconds": {{1\.1e-05|1\.10*[0-9]e-05|1\.09999[0-9]*e-05}},
// JSON-NEXT:       "local_bytes": 0,
// JSON-NEXT:       "local_copies": 0,
// JSON-NEXT:       "network_bytes": 12000,
// JSON-NEXT:       "network_messages": 6,
// JSON-NEXT:       "nvlink_bytes": 0,
// JSON-NEXT:       "nvlink_messages": 0,
// JSON-NEXT:       "ratios": {
// JSON-NEXT:         "busiest_nic_over_lower_bound": 1.5,
// JSON-NEXT:         "estimated_over_lower_bound_seconds": 1.22222{{[0-9]*}},
// JSON-NEXT:         "network_bytes_over_lower_bound": 1.5
// JSON-NEXT:       },
// JSON-NEXT:       "steps": 1
// JSON-NEXT:     },
// JSON-NEXT:     "gather-broadcast": {
// JSON-NEXT:       "busiest_nic_bytes": 12000,
// JSON-NEXT:       "busiest_nic_in_bytes": 4000,
// JSON-NEXT:       "busiest_nic_in_rank": 4,
// JSON-NEXT:       "busiest_nic_out_bytes": 12000,
// JSON-NEXT:       "busiest_nic_out_rank": 0,
// JSON-NEXT:       "estimated_seconds": {{1\.82e-05|1\.820*[0-9]e-05|1\.81999[0-9]*e-05}},
// JSON-NEXT:       "local_bytes": 0,
// JSON-NEXT:       "local_copies": 0,
// JSON-NEXT:       "network_bytes": 12000,
// JSON-NEXT:       "network_messages": 3,
// JSON-NEXT:       "nvlink_bytes": 2000,
// JSON-NEXT:       "nvlink_messages": 1,
// JSON-NEXT:       "ratios": {
// JSON-NEXT:         "busiest_nic_over_lower_bound": 3,
// JSON-NEXT:         "estimated_over_lower_bound_seconds": 2.0222{{[0-9]*}},
// JSON-NEXT:         "network_bytes_over_lower_bound": 1.5
// JSON-NEXT:       },
// JSON-NEXT:       "steps": 2
// JSON-NEXT:     }
// JSON-NEXT:   },
// JSON-NEXT:   "busiest_nic_bytes": 4000,
// JSON-NEXT:   "class_routes": [
// JSON-NEXT:     {
// JSON-NEXT:       "algorithm": "direct",
// JSON-NEXT:       "class": 0,
// JSON-NEXT:       "copy": 0,
// JSON-NEXT:       "example": "w",
// JSON-NEXT:       "network": 8000,
// JSON-NEXT:       "nvlink": 0,
// JSON-NEXT:       "relay_tree": 0,
// JSON-NEXT:       "relayed": 4000,
// JSON-NEXT:       "tensors": 1,
// JSON-NEXT:       "transit": 0
// JSON-NEXT:     }
// JSON-NEXT:   ],
// JSON-NEXT:   "classes": 1,
// JSON-NEXT:   "estimated_seconds": {{1\.02e-05|1\.020*[0-9]e-05|1\.01999[0-9]*e-05}},
// JSON-NEXT:   "groups": 1,
// JSON-NEXT:   "lower_bound_busiest_nic_bytes": 4000,
// JSON-NEXT:   "lower_bound_network_bytes": 8000,
// JSON-NEXT:   "lower_bound_seconds": {{9e-06|9\.0*[0-9]e-06|8\.9999[0-9]*e-06}},
// JSON-NEXT:   "lower_bound_term": "domain_ingress",
// JSON-NEXT:   "lower_bound_terms": {
// JSON-NEXT:     "all_network": {
// JSON-NEXT:       "bytes": 8000,
// JSON-NEXT:       "gpus": 7,
// JSON-NEXT:       "seconds": 6.14{{[0-9]*}}e-06
// JSON-NEXT:     },
// JSON-NEXT:     "domain_egress": {
// JSON-NEXT:       "bytes": 0,
// JSON-NEXT:       "domain": -1,
// JSON-NEXT:       "gpus": 0,
// JSON-NEXT:       "seconds": 0
// JSON-NEXT:     },
// JSON-NEXT:     "domain_ingress": {
// JSON-NEXT:       "bytes": 4000,
// JSON-NEXT:       "domain": 3,
// JSON-NEXT:       "gpus": 1,
// JSON-NEXT:       "seconds": {{9e-06|9\.0*[0-9]e-06|8\.9999[0-9]*e-06}}
// JSON-NEXT:     },
// JSON-NEXT:     "gpu_receive": {
// JSON-NEXT:       "bytes": 4000,
// JSON-NEXT:       "gpus": 1,
// JSON-NEXT:       "rank": 4,
// JSON-NEXT:       "seconds": 1.3636{{[0-9]*}}e-06
// JSON-NEXT:     }
// JSON-NEXT:   },
// JSON-NEXT:   "network_bytes": 8000,
// JSON-NEXT:   "pieces": 6,
// JSON-NEXT:   "plan": {
// JSON-NEXT:     "busiest_nic_bytes": 4000,
// JSON-NEXT:     "busiest_nic_in_bytes": 4000,
// JSON-NEXT:     "busiest_nic_in_rank": 6,
// JSON-NEXT:     "busiest_nic_out_bytes": 2000,
// JSON-NEXT:     "busiest_nic_out_rank": 0,
// JSON-NEXT:     "estimated_seconds": {{1\.02e-05|1\.020*[0-9]e-05|1\.01999[0-9]*e-05}},
// JSON-NEXT:     "local_bytes": 0,
// JSON-NEXT:     "local_copies": 0,
// JSON-NEXT:     "network_bytes": 8000,
// JSON-NEXT:     "network_messages": 4,
// JSON-NEXT:     "nvlink_bytes": 4000,
// JSON-NEXT:     "nvlink_messages": 2,
// JSON-NEXT:     "steps": 2
// JSON-NEXT:   },
// JSON-NEXT:   "ratios": {
// JSON-NEXT:     "busiest_nic_over_lower_bound": 1,
// JSON-NEXT:     "estimated_over_lower_bound_seconds": 1.133{{[0-9]*}},
// JSON-NEXT:     "network_bytes_over_lower_bound": 1,
// JSON-NEXT:     "speedup_over_direct": 1.078{{[0-9]*}},
// JSON-NEXT:     "speedup_over_gather_broadcast": 1.784{{[0-9]*}}
// JSON-NEXT:   },
// JSON-NEXT:   "relay_lane_span": 1,
// JSON-NEXT:   "relay_lanes": false,
// JSON-NEXT:   "relay_tree": {
// JSON-NEXT:     "fed_bytes": 0,
// JSON-NEXT:     "fed_crossings": 0
// JSON-NEXT:   },
// JSON-NEXT:   "tensors": 1,
// JSON-NEXT:   "topology": {
// JSON-NEXT:     "gpus_per_node": 2,
// JSON-NEXT:     "nic_GBps_per_gpu": 1,
// JSON-NEXT:     "nic_latency_us": 5,
// JSON-NEXT:     "nvl_domain_size": 2,
// JSON-NEXT:     "nvlink_GBps_per_gpu": 10,
// JSON-NEXT:     "nvlink_latency_us": 1,
// JSON-NEXT:     "present": true
// JSON-NEXT:   },
// JSON-NEXT:   "transits": {
// JSON-NEXT:     "bytes": 0,
// JSON-NEXT:     "entering": 0,
// JSON-NEXT:     "leaving": 0
// JSON-NEXT:   }
// JSON-NEXT: {{^[}]$}}

// With the per-rank table: the plan's per_rank list, one object per rank
// in ascending order; the relay ranks 4 and 5 and the double entry 6.
// The baselines have their per-rank tables too: gather-broadcast's root
// sends all 12000 bytes.
// JSON-RANKS:      "gather-broadcast": {
// JSON-RANKS:        "per_rank": [
// JSON-RANKS:            "bytes_out": 12000,
// JSON-RANKS-NEXT:       "messages_in": 0,
// JSON-RANKS-NEXT:       "messages_out": 3
// JSON-RANKS:      "lower_bound_network_bytes": 8000,
// JSON-RANKS:      "network_bytes": 8000,
// JSON-RANKS:      "plan": {
// JSON-RANKS:        "per_rank": [
// JSON-RANKS:            "bytes_out": 2000,
// JSON-RANKS:          "rank": 0
// JSON-RANKS:          "rank": 1
// JSON-RANKS:          "rank": 2
// JSON-RANKS:          "rank": 3
// JSON-RANKS:          "network": {
// JSON-RANKS-NEXT:       "bytes_in": 2000,
// JSON-RANKS-NEXT:       "bytes_out": 0,
// JSON-RANKS-NEXT:       "messages_in": 1,
// JSON-RANKS-NEXT:       "messages_out": 0
// JSON-RANKS-NEXT:     },
// JSON-RANKS-NEXT:     "nvlink": {
// JSON-RANKS-NEXT:       "bytes_in": 2000,
// JSON-RANKS-NEXT:       "bytes_out": 2000,
// JSON-RANKS-NEXT:       "messages_in": 1,
// JSON-RANKS-NEXT:       "messages_out": 1
// JSON-RANKS-NEXT:     },
// JSON-RANKS-NEXT:     "rank": 4
// JSON-RANKS:          "rank": 5
// JSON-RANKS:          "network": {
// JSON-RANKS-NEXT:       "bytes_in": 4000,
// JSON-RANKS-NEXT:       "bytes_out": 0,
// JSON-RANKS-NEXT:       "messages_in": 2,
// JSON-RANKS-NEXT:       "messages_out": 0
// JSON-RANKS-NEXT:     },
// JSON-RANKS:          "rank": 6
// JSON-RANKS-NEXT:   }
// JSON-RANKS-NEXT: ],
// JSON-RANKS-NEXT: "steps": 2
// JSON-RANKS:      "ratios": {

// UNROUTED:      {{^}}reshard 12000 0 0 6000 1 1.100000e-05{{$}}
// UNROUTED-NEXT: {{^}}direct 12000 0 0 6000 1 1.100000e-05{{$}}
// UNROUTED-NEXT: {{^}}gather-broadcast 12000 2000 0 12000 2 1.820000e-05{{$}}
// UNROUTED-NEXT: {{^}}lower bound 8000 4000 9.000000e-06{{$}}
// UNROUTED-NEXT: {{^}}network bytes / lower bound: 1.500; busiest NIC / bound: 1.500; estimated / lower-bound time: 1.222{{$}}
// UNROUTED-NEXT: {{^}}bound terms: {{.*}}; binding: domain_ingress{{$}}
// UNROUTED-NEXT: {{^}}speedup: 1.00x over direct, 1.65x over gather-broadcast{{$}}

// 3 destination ranks x 1000 elements.
// EXEC-REFIT: checked 1 tensors, 6 pieces, 3000 destination elements: all correct

//--- local.mlir
// Domains of 2; NIC 10 GB/s, NVLink 100 GB/s. 9 x f32, replicated over
// dp = 2 on ranks 0, 1 (domain 0); tp = 3 on ranks [1, 0, 2], 12 B each.
// Ranks 1 and 0 copy their thirds locally (24 B, 2 copies); rank 2
// (domain 1) gets [6, 9) from 0 over the network (12 B).
// Step 0: rank 0's NIC out, 5 us + 12 B / 10 GB/s = 5.0012 us (its local
// copy, 12 B at 100 GB/s, is shorter).
// Direct is the same plan. Gather-broadcast: root 0 holds everything (no
// gather); step 1: 36 B to 1 (NVLink), 36 B to 2 (network), a 12 B local
// copy for itself; 5 us + 36 B / 10 GB/s = 5.0036 us, one step.
// Bounds: 12 B needed in domain 1, held by no rank there; ingress over
// rank 2 alone: 12; egress of domain 0 (holds it alone) over its plan GPUs
// 0 and 1: 6; 12 B over the 3 plan GPUs: 4. Bound 12 B: 5.0012 us.

reshard.topology @t gpus_per_node = 2 nvl_domain_size = 2
    nvlink_GBps_per_gpu = 100.0 nic_GBps_per_gpu = 10.0
reshard.mesh @train shape = [2] axes = ["dp"] ranks = [0, 1]
reshard.mesh @infer shape = [3] axes = ["tp"] ranks = [1, 0, 2]
reshard.redistribute @w from @train <[[]]> to @infer <[[tp]]> topology @t
    : tensor<9xf32> -> tensor<9xf32>

// LOCAL:      {{^}}reshard 12 0 24 12 1 5.001200e-06{{$}}
// LOCAL-NEXT: {{^}}direct 12 0 24 12 1 5.001200e-06{{$}}
// LOCAL-NEXT: {{^}}gather-broadcast 36 36 12 36 1 5.003600e-06{{$}}
// LOCAL-NEXT: {{^}}lower bound 12 12 5.001200e-06{{$}}
// LOCAL-NEXT: {{^}}network bytes / lower bound: 1.000; busiest NIC / bound: 1.000; estimated / lower-bound time: 1.000{{$}}
// LOCAL-NEXT: {{^}}bound terms: domain ingress 5.001200e-06 s (domain 1, 12 B over 1 NIC); domain egress 5.000600e-06 s (domain 0, 12 B over 2 NICs); all network 5.000400e-06 s (12 B over 3 NICs); GPU receive 1.000109e-06 s (rank 2, 12 B over NIC + NVLink); binding: domain_ingress{{$}}
// LOCAL-NEXT: {{^}}speedup: 1.00x over direct, 1.00x over gather-broadcast{{$}}
// The 24 B ranks 0 and 1 hold arrive by local copy, the 12 B rank 2
// needs over the network from holder 0.
// LOCAL-NEXT: routes per class
// LOCAL-NEXT: class
// LOCAL-NEXT: {{^}} 0 1 24 0 12 0 0 0 direct w{{$}}
// LOCAL-NEXT: rank
// LOCAL-NEXT: {{^}} 0 12 0 0 12 0 1{{$}}
// LOCAL-NEXT: {{^}} 1 12 0 0 0 0 0{{$}}
// LOCAL-NEXT: {{^}} 2 0 0 0 0 12 1{{$}}

// LOCAL-JSON:      "gather-broadcast": {
// LOCAL-JSON:        "local_bytes": 12,
// LOCAL-JSON-NEXT:   "local_copies": 1,
// LOCAL-JSON:        "plan": {
// LOCAL-JSON:        "local_bytes": 24,
// LOCAL-JSON-NEXT:   "local_copies": 2,
// LOCAL-JSON-NEXT:   "network_bytes": 12,
// LOCAL-JSON-NEXT:   "network_messages": 1,
// LOCAL-JSON-NEXT:   "nvlink_bytes": 0,
// LOCAL-JSON-NEXT:   "nvlink_messages": 0,
// LOCAL-JSON:          "local": {
// LOCAL-JSON-NEXT:       "bytes_in": 0,
// LOCAL-JSON-NEXT:       "bytes_out": 12,
// LOCAL-JSON-NEXT:       "messages_in": 0,
// LOCAL-JSON-NEXT:       "messages_out": 1
// LOCAL-JSON:          "rank": 0

//--- no-topology.mlir
// No topology: every rank is a domain of its own, NIC 50 GB/s and 5 us by
// default. 32 x f32 = 128 B from rank 0 to rank 1: 5 us + 128 B / 50 GB/s
// = 5.00256 us, for the plan, both baselines (root 0 holds it all) and the
// bound (128 B through rank 1's NIC).

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[]]> to @b <[[]]>
    : tensor<32xf32> -> tensor<32xf32>

// NO-TOPO:      {{^}}reshard report: 1 tensors, 1 pieces (1 classes, 1 groups){{$}}
// NO-TOPO-NEXT: {{^}}topology: none (every rank its own domain, default link speeds){{$}}
// NO-TOPO-NEXT: plan
// NO-TOPO-NEXT: {{^}}reshard 128 0 0 128 1 5.002560e-06{{$}}
// NO-TOPO-NEXT: {{^}}direct 128 0 0 128 1 5.002560e-06{{$}}
// NO-TOPO-NEXT: {{^}}gather-broadcast 128 0 0 128 1 5.002560e-06{{$}}
// NO-TOPO-NEXT: {{^}}lower bound 128 128 5.002560e-06{{$}}

// NO-TOPO-JSON:      "topology": {
// NO-TOPO-JSON-NEXT:   "gpus_per_node": 8,
// NO-TOPO-JSON-NEXT:   "nic_GBps_per_gpu": 50,
// NO-TOPO-JSON-NEXT:   "nic_latency_us": 5,
// NO-TOPO-JSON-NEXT:   "nvl_domain_size": 8,
// NO-TOPO-JSON-NEXT:   "nvlink_GBps_per_gpu": 450,
// NO-TOPO-JSON-NEXT:   "nvlink_latency_us": 1,
// NO-TOPO-JSON-NEXT:   "present": false

//--- nested.mlir
module {
  module {
    reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
    reshard.redistribute @a from @m <[[tp]]> to @m <[[]]> : tensor<64xf32> -> tensor<64xf32>
  }
  module {
    reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
    reshard.redistribute @b from @m <[[]]> to @m <[[tp]]> : tensor<64xf32> -> tensor<64xf32>
  }
}
