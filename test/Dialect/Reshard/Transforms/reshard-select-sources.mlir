// reshard-select-sources: who sends every piece. Each case below is a module
// of its own (split-file), because the pass balances NIC load over the whole
// module and the cases must not share loads. Every decision is worked out by
// hand from the pass description (Passes.td, docs/Routing.md) before its
// CHECK lines: a local copy if the destination holds the box; else the
// holder in the destination's NVLink domain that has sent least over NVLink;
// else one network crossing per destination domain and box, from the holder
// whose NIC has sent least, into the destination (of that domain, needing
// that box) whose NIC has received least, the others getting it `via` the
// entry in step 1. Largest piece first, input order on ties, lowest rank on
// equal load. Rank r sits in NVLink domain r / nvl_domain_size. Every plan
// is then executed by reshard-run, which checks each destination element.

// RUN: rm -rf %t && split-file %s %t

// (a) Data-parallel source replicas in two domains share the network load.
// RUN: reshard-opt %t/replicas.mlir --reshard-intersect --reshard-select-sources --reshard-expand | FileCheck %s --check-prefix=REPLICAS
// RUN: reshard-opt %t/replicas.mlir --reshard-intersect --reshard-select-sources=strategy=balanced --reshard-expand | FileCheck %s --check-prefix=REPLICAS
// RUN: reshard-opt %t/replicas.mlir --reshard-intersect --reshard-select-sources | reshard-run - --check | FileCheck %s --check-prefix=EXEC-REPLICAS

// (b) Eight destination replicas in one domain: one crossing per box.
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources --reshard-expand | FileCheck %s --check-prefix=RELAY
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources | reshard-opt --reshard-expand | FileCheck %s --check-prefix=RELAY
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources | reshard-run - --check | FileCheck %s --check-prefix=EXEC-RELAY
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources --reshard-report=format=json -o /dev/null | FileCheck %s --check-prefix=RELAY-BYTES

// (c) A holder inside the destination's domain sends over NVLink.
// RUN: reshard-opt %t/nvlink.mlir --reshard-intersect --reshard-select-sources --reshard-expand | FileCheck %s --check-prefix=NVLINK
// RUN: reshard-opt %t/nvlink.mlir --reshard-intersect --reshard-select-sources | reshard-run - --check | FileCheck %s --check-prefix=EXEC-NVLINK

// (d) A destination that holds its box copies it locally.
// RUN: reshard-opt %t/local.mlir --reshard-intersect --reshard-select-sources --reshard-expand | FileCheck %s --check-prefix=LOCAL
// RUN: reshard-opt %t/local.mlir --reshard-intersect --reshard-select-sources | reshard-run - --check | FileCheck %s --check-prefix=EXEC-LOCAL

// (e) strategy=direct: a local copy or the lowest holder, never a relay; it
// also undoes an earlier balanced selection.
// RUN: reshard-opt %t/nvlink.mlir --reshard-intersect --reshard-select-sources=strategy=direct --reshard-expand | FileCheck %s --check-prefix=DIRECT-NVLINK
// RUN: reshard-opt %t/nvlink.mlir --reshard-intersect --reshard-select-sources=strategy=direct | reshard-run - --check | FileCheck %s --check-prefix=EXEC-NVLINK
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources=strategy=direct --reshard-expand | FileCheck %s --check-prefix=DIRECT-RELAY
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources --reshard-select-sources=strategy=direct --reshard-expand | FileCheck %s --check-prefix=DIRECT-RELAY
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources=strategy=direct | reshard-run - --check | FileCheck %s --check-prefix=EXEC-RELAY
// RUN: reshard-opt %t/local.mlir --reshard-intersect --reshard-select-sources=strategy=direct --reshard-expand | FileCheck %s --check-prefix=LOCAL
// RUN: reshard-opt %t/replicas.mlir --reshard-intersect --reshard-select-sources=strategy=direct --reshard-expand | FileCheck %s --check-prefix=DIRECT-REPLICAS
// RUN: reshard-opt %t/replicas.mlir --reshard-intersect --reshard-select-sources=strategy=direct | reshard-run - --check | FileCheck %s --check-prefix=EXEC-REPLICAS

// (f) Two tensors: NIC load is balanced across the module, not per tensor.
// RUN: reshard-opt %t/two-tensors.mlir --reshard-intersect --reshard-select-sources --reshard-expand | FileCheck %s --check-prefix=TWO
// RUN: reshard-opt %t/two-tensors.mlir --reshard-intersect --reshard-select-sources | reshard-run - --check | FileCheck %s --check-prefix=EXEC-TWO

//--- replicas.mlir
// (a) Domains of 2. The source is replicated over dp = 2 on ranks 0
// (domain 0) and 2 (domain 1): both hold all 7 elements, holder group
// [0, 2]. The destination splits them over tp = 2 on ranks [5, 4], both in
// domain 2 (no holder there): rank 5 (tp0) needs [0, 4) = 16 B, rank 4
// (tp1) needs [4, 7) = 12 B. Pieces are listed by destination rank, so the
// 12-byte piece of rank 4 comes first in the table; largest first, the
// 16-byte piece is decided first.
//   rank 5 [0, 4), 16 B: NIC out 0 = 0, 2 = 0 -> equal, lowest: 0. (0: 16)
//   rank 4 [4, 7), 12 B: NIC out 0 = 16, 2 = 0 -> 2.
// Each replica sends one piece; no relay (different boxes).
// With strategy=direct both come from the lowest holder, 0.

reshard.topology @t gpus_per_node = 2 nvl_domain_size = 2
    nvlink_GBps_per_gpu = 100.0 nic_GBps_per_gpu = 10.0
reshard.mesh @train shape = [2] axes = ["dp"] ranks = [0, 2]
reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [5, 4]
reshard.redistribute @w from @train <[[]]> to @infer <[[tp]]> topology @t
    : tensor<7xf32> -> tensor<7xf32>

// REPLICAS:      reshard.pieces @w rank 1 holders {{\[\[}}0, 2]] [
// REPLICAS-NEXT:   box [4] size [3] from 2 at [4] to 4 at [0] group 0,{{$}}
// REPLICAS-NEXT:   box [0] size [4] from 0 at [0] to 5 at [0] group 0{{$}}
// REPLICAS-NEXT: ]

// DIRECT-REPLICAS:      reshard.pieces @w rank 1 holders {{\[\[}}0, 2]] [
// DIRECT-REPLICAS-NEXT:   box [4] size [3] from 0 at [4] to 4 at [0] group 0,{{$}}
// DIRECT-REPLICAS-NEXT:   box [0] size [4] from 0 at [0] to 5 at [0] group 0{{$}}
// DIRECT-REPLICAS-NEXT: ]

// EXEC-REPLICAS: checked 1 tensors, 2 pieces, 7 destination elements: all correct

//--- relay.mlir
// (b) DGX domains of 8. Source tp = 2 on ranks 0-1 (domain 0): rank 0
// holds [0, 8) (32 B, group 0), rank 1 holds [8, 15) (28 B, group 1).
// Destination dp = 8 on ranks 8-15 (domain 1), replicated: every one needs
// both boxes, and no rank of domain 1 holds either. So each box forms one
// network group of the 8 destinations and crosses once.
//   box [0], 32 B, first (larger): holder 0 (only one). Entry: NIC in of
//     8..15 all 0 -> lowest, 8. (NIC in 8 = 32)
//     8 gets it from 0 directly; 9..15 get it via 8 in step 1.
//   box [8], 28 B: holder 1. Entry: NIC in 8 = 32, 9..15 = 0 -> 9.
//     9 gets it from 1 directly; 8 and 10..15 get it via 9 in step 1.
// Exactly one piece per box without `via`, seven forwards each. The `from`
// of a forward stays the holder the box came from. Network bytes are 32 +
// 28 = 60, the lower bound (each box needed once in domain 1); the direct
// baseline sends both boxes to all 8 ranks: 8 x 60 = 480.
// With strategy=direct: 16 pieces, each from its holder, no via.

reshard.topology @dgx gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @infer shape = [8] axes = ["dp"]
    ranks = [8, 9, 10, 11, 12, 13, 14, 15]
reshard.redistribute @w from @train <[[tp]]> to @infer <[[]]> topology @dgx
    : tensor<15xf32> -> tensor<15xf32>

// RELAY:      reshard.pieces @w rank 1 holders {{\[\[}}0], [1]] [
// RELAY-NEXT:   box [0] size [8] from 0 at [0] to 8 at [0] group 0,{{$}}
// RELAY-NEXT:   box [8] size [7] from 1 at [0] to 8 at [8] group 1 via 9 step 1,
// RELAY-NEXT:   box [0] size [8] from 0 at [0] to 9 at [0] group 0 via 8 step 1,
// RELAY-NEXT:   box [8] size [7] from 1 at [0] to 9 at [8] group 1,{{$}}
// RELAY-NEXT:   box [0] size [8] from 0 at [0] to 10 at [0] group 0 via 8 step 1,
// RELAY-NEXT:   box [8] size [7] from 1 at [0] to 10 at [8] group 1 via 9 step 1,
// RELAY-NEXT:   box [0] size [8] from 0 at [0] to 11 at [0] group 0 via 8 step 1,
// RELAY-NEXT:   box [8] size [7] from 1 at [0] to 11 at [8] group 1 via 9 step 1,
// RELAY-NEXT:   box [0] size [8] from 0 at [0] to 12 at [0] group 0 via 8 step 1,
// RELAY-NEXT:   box [8] size [7] from 1 at [0] to 12 at [8] group 1 via 9 step 1,
// RELAY-NEXT:   box [0] size [8] from 0 at [0] to 13 at [0] group 0 via 8 step 1,
// RELAY-NEXT:   box [8] size [7] from 1 at [0] to 13 at [8] group 1 via 9 step 1,
// RELAY-NEXT:   box [0] size [8] from 0 at [0] to 14 at [0] group 0 via 8 step 1,
// RELAY-NEXT:   box [8] size [7] from 1 at [0] to 14 at [8] group 1 via 9 step 1,
// RELAY-NEXT:   box [0] size [8] from 0 at [0] to 15 at [0] group 0 via 8 step 1,
// RELAY-NEXT:   box [8] size [7] from 1 at [0] to 15 at [8] group 1 via 9 step 1{{$}}
// RELAY-NEXT: ]

// RELAY-BYTES:      "direct": {
// RELAY-BYTES:        "network_bytes": 480,
// RELAY-BYTES:      "lower_bound_network_bytes": 60,
// RELAY-BYTES:      "network_bytes": 60,

// DIRECT-RELAY:      reshard.pieces @w rank 1 holders {{\[\[}}0], [1]] [
// DIRECT-RELAY-NEXT:   box [0] size [8] from 0 at [0] to 8 at [0] group 0,{{$}}
// DIRECT-RELAY-NEXT:   box [8] size [7] from 1 at [0] to 8 at [8] group 1,{{$}}
// DIRECT-RELAY-NEXT:   box [0] size [8] from 0 at [0] to 9 at [0] group 0,{{$}}
// DIRECT-RELAY-NEXT:   box [8] size [7] from 1 at [0] to 9 at [8] group 1,{{$}}
// DIRECT-RELAY-NEXT:   box [0] size [8] from 0 at [0] to 10 at [0] group 0,{{$}}
// DIRECT-RELAY-NEXT:   box [8] size [7] from 1 at [0] to 10 at [8] group 1,{{$}}
// DIRECT-RELAY-NEXT:   box [0] size [8] from 0 at [0] to 11 at [0] group 0,{{$}}
// DIRECT-RELAY-NEXT:   box [8] size [7] from 1 at [0] to 11 at [8] group 1,{{$}}
// DIRECT-RELAY-NEXT:   box [0] size [8] from 0 at [0] to 12 at [0] group 0,{{$}}
// DIRECT-RELAY-NEXT:   box [8] size [7] from 1 at [0] to 12 at [8] group 1,{{$}}
// DIRECT-RELAY-NEXT:   box [0] size [8] from 0 at [0] to 13 at [0] group 0,{{$}}
// DIRECT-RELAY-NEXT:   box [8] size [7] from 1 at [0] to 13 at [8] group 1,{{$}}
// DIRECT-RELAY-NEXT:   box [0] size [8] from 0 at [0] to 14 at [0] group 0,{{$}}
// DIRECT-RELAY-NEXT:   box [8] size [7] from 1 at [0] to 14 at [8] group 1,{{$}}
// DIRECT-RELAY-NEXT:   box [0] size [8] from 0 at [0] to 15 at [0] group 0,{{$}}
// DIRECT-RELAY-NEXT:   box [8] size [7] from 1 at [0] to 15 at [8] group 1{{$}}
// DIRECT-RELAY-NEXT: ]

// 8 destinations x 15 elements.
// EXEC-RELAY: checked 1 tensors, 16 pieces, 120 destination elements: all correct

//--- nvlink.mlir
// (c) Domains of 4 (nodes of 2). The source is replicated over dp = 4 on
// ranks [0, 1, 4, 7]: 0 and 1 in domain 0, 4 and 7 in domain 1, one holder
// group [0, 1, 4, 7]. The destination splits 7 elements over tp = 2 on
// ranks 5 and 6, both in domain 1, where 4 and 7 hold everything:
//   rank 5 [0, 4), 16 B, first: domain holders 4, 7; NVLink out both 0 ->
//     4 (not 0, the lowest holder, whose NIC is idle). (NVLink out 4 = 16)
//   rank 6 [4, 7), 12 B: NVLink out 4 = 16, 7 = 0 -> 7.
// Nothing crosses the network. With strategy=direct both come from 0.

reshard.topology @t gpus_per_node = 2 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 100.0 nic_GBps_per_gpu = 10.0
reshard.mesh @train shape = [4] axes = ["dp"] ranks = [0, 1, 4, 7]
reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [5, 6]
reshard.redistribute @w from @train <[[]]> to @infer <[[tp]]> topology @t
    : tensor<7xf32> -> tensor<7xf32>

// NVLINK:      reshard.pieces @w rank 1 holders {{\[\[}}0, 1, 4, 7]] [
// NVLINK-NEXT:   box [0] size [4] from 4 at [0] to 5 at [0] group 0,{{$}}
// NVLINK-NEXT:   box [4] size [3] from 7 at [4] to 6 at [0] group 0{{$}}
// NVLINK-NEXT: ]

// DIRECT-NVLINK:      reshard.pieces @w rank 1 holders {{\[\[}}0, 1, 4, 7]] [
// DIRECT-NVLINK-NEXT:   box [0] size [4] from 0 at [0] to 5 at [0] group 0,{{$}}
// DIRECT-NVLINK-NEXT:   box [4] size [3] from 0 at [4] to 6 at [0] group 0{{$}}
// DIRECT-NVLINK-NEXT: ]

// EXEC-NVLINK: checked 1 tensors, 2 pieces, 7 destination elements: all correct

//--- local.mlir
// (d) Domains of 2. The source is replicated over dp = 2 on ranks 0 and 1
// (domain 0): group [0, 1]. The destination splits 9 elements over tp = 3
// on ranks [1, 0, 2], 12 B each:
//   rank 0 [3, 6): holds it -> local copy, from 0 at [3].
//   rank 1 [0, 3): holds it -> local copy, from 1 at [0] (not from 0, the
//     lowest holder, nor over NVLink from 0 in its domain).
//   rank 2 [6, 9): domain 1, no holder there -> network; NIC out 0 = 1 = 0
//     -> lowest, 0. A single destination in its domain: no relay.
// strategy=direct gives the same: local copies, else the lowest holder.

reshard.topology @t gpus_per_node = 2 nvl_domain_size = 2
    nvlink_GBps_per_gpu = 100.0 nic_GBps_per_gpu = 10.0
reshard.mesh @train shape = [2] axes = ["dp"] ranks = [0, 1]
reshard.mesh @infer shape = [3] axes = ["tp"] ranks = [1, 0, 2]
reshard.redistribute @w from @train <[[]]> to @infer <[[tp]]> topology @t
    : tensor<9xf32> -> tensor<9xf32>

// LOCAL:      reshard.pieces @w rank 1 holders {{\[\[}}0, 1]] [
// LOCAL-NEXT:   box [3] size [3] from 0 at [3] to 0 at [0] group 0,{{$}}
// LOCAL-NEXT:   box [0] size [3] from 1 at [0] to 1 at [0] group 0,{{$}}
// LOCAL-NEXT:   box [6] size [3] from 0 at [6] to 2 at [0] group 0{{$}}
// LOCAL-NEXT: ]

// EXEC-LOCAL: checked 1 tensors, 3 pieces, 9 destination elements: all correct

//--- two-tensors.mlir
// (f) Domains of 2. Both tensors are replicated over dp = 2 on ranks 0
// (domain 0) and 2 (domain 1), and go to domain 2 (ranks 4, 5).
//   @a: 8 x f32 to rank 4 alone: one piece of 32 B.
//   @b: 5 x f64 over tp = 2 on ranks 4, 5: rank 4 [0, 3) = 24 B, rank 5
//       [3, 5) = 16 B.
// All three pieces are decided together, largest first:
//   @a -> 4, 32 B: NIC out 0 = 2 = 0 -> 0.           (0: 32, 2: 0)
//   @b -> 4, 24 B: 0 = 32, 2 = 0 -> 2.                (0: 32, 2: 24)
//   @b -> 5, 16 B: 0 = 32, 2 = 24 -> 2.               (0: 32, 2: 40)
// Balancing @b on its own would have sent its 24-byte piece from 0 (equal
// load, lowest rank): the replica that has sent less across the module, 2,
// takes both pieces of @b instead.

reshard.topology @t gpus_per_node = 2 nvl_domain_size = 2
    nvlink_GBps_per_gpu = 100.0 nic_GBps_per_gpu = 10.0
reshard.mesh @train shape = [2] axes = ["dp"] ranks = [0, 2]
reshard.mesh @one shape = [1] axes = ["x"] ranks = [4]
reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [4, 5]
reshard.redistribute @a from @train <[[]]> to @one <[[]]> topology @t
    : tensor<8xf32> -> tensor<8xf32>
reshard.redistribute @b from @train <[[]]> to @infer <[[tp]]> topology @t
    : tensor<5xf64> -> tensor<5xf64>

// TWO:      reshard.pieces @a rank 1 holders {{\[\[}}0, 2]] [
// TWO-NEXT:   box [0] size [8] from 0 at [0] to 4 at [0] group 0{{$}}
// TWO-NEXT: ]
// TWO:      reshard.pieces @b rank 1 holders {{\[\[}}0, 2]] [
// TWO-NEXT:   box [0] size [3] from 2 at [0] to 4 at [0] group 0,{{$}}
// TWO-NEXT:   box [3] size [2] from 2 at [3] to 5 at [0] group 0{{$}}
// TWO-NEXT: ]

// 8 + 5 destination elements.
// EXEC-TWO: checked 2 tensors, 3 pieces, 13 destination elements: all correct
