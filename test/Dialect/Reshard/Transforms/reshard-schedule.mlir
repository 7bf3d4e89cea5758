// reshard-schedule: steps within a staging budget and an operation bound.
// Each case is a module of its own (split-file). Expected tables are worked
// out by hand from the pass description (Passes.td, docs/Routing.md):
// pieces above the budget (local copies excepted) are split into whole
// slabs of the outermost dim that fit, else one slab at a time along the
// next dim; then transfers are placed first fit, largest first (input
// order on ties), in the earliest step where sender and receiver each stay
// within `staging-budget` bytes (sends plus receives) and within
// `max-ops-per-step` distinct peers (sent to plus received from); relay
// forwards go after the step in which their entry received the box; local
// copies stay in step 0. Every schedule is then executed by reshard-run,
// which also checks the relay order.

// RUN: rm -rf %t && split-file %s %t

// A 32 x f32 piece (128 B): split by a budget of 64 and of 127, not by 128.
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | FileCheck %s --check-prefix=SPLIT64
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | reshard-opt | FileCheck %s --check-prefix=SPLIT64
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-SPLIT2
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=127 | FileCheck %s --check-prefix=SPLIT127
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=127 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-SPLIT2
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=128 | FileCheck %s --check-prefix=SPLIT128
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule | FileCheck %s --check-prefix=SPLIT128

// The smallest budget, 8 bytes: one f64 element per piece.
// RUN: reshard-opt %t/f64.mlir --reshard-intersect --reshard-schedule=staging-budget=8 | FileCheck %s --check-prefix=F64
// RUN: reshard-opt %t/f64.mlir --reshard-intersect --reshard-schedule=staging-budget=8 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-F64

// 2-D: whole outer slabs; and a row too large, split along the inner dim.
// RUN: reshard-opt %t/slabs.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | FileCheck %s --check-prefix=SLABS
// RUN: reshard-opt %t/slabs.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-SLABS
// RUN: reshard-opt %t/rows.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | FileCheck %s --check-prefix=ROWS
// RUN: reshard-opt %t/rows.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-ROWS

// max-ops-per-step: one sender, three receivers; three senders, one receiver.
// RUN: reshard-opt %t/fan-out.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=max-ops-per-step=2 | FileCheck %s --check-prefix=FAN-OUT
// RUN: reshard-opt %t/fan-out.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=max-ops-per-step=2 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-FAN-OUT
// RUN: reshard-opt %t/fan-out.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=max-ops-per-step=3 | FileCheck %s --check-prefix=FAN-OUT-3
// RUN: reshard-opt %t/fan-in.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=max-ops-per-step=2 | FileCheck %s --check-prefix=FAN-IN
// RUN: reshard-opt %t/fan-in.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=max-ops-per-step=2 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-FAN-IN

// Relay forwards after their entry's step; a large local copy in step 0.
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources | FileCheck %s --check-prefix=RELAY-UNSCHEDULED
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=32 max-ops-per-step=4" | FileCheck %s --check-prefix=RELAY
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=32 max-ops-per-step=4" | reshard-run - --check | FileCheck %s --check-prefix=EXEC-RELAY

// A relayed box split by the budget: each forward follows its own part.
// RUN: reshard-opt %t/relay-split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | FileCheck %s --check-prefix=RELAY-SPLIT
// RUN: reshard-opt %t/relay-split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-RELAY-SPLIT

//--- split.mlir
// Rank 0 sends all 32 x f32 = 128 B to rank 1 (no topology: network).
//   budget 64: 64 / 4 = 16 elements per piece: [0, 16) and [16, 32), 64 B
//     each. The first fills both ranks' step 0 (64 of 64), so the second
//     goes to step 1.
//   budget 127: 127 / 4 = 31 elements: [0, 31) = 124 B in step 0, then
//     [31, 32) = 4 B, which does not fit beside it (128 > 127): step 1.
//   budget 128 (and the 1 GiB default): the piece fits, no split, step 0.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[]]> to @b <[[]]>
    : tensor<32xf32> -> tensor<32xf32>

// SPLIT64:      reshard.pieces @w rank 1 holders {{\[\[}}0]] [
// SPLIT64-NEXT:   box [0] size [16] from 0 at [0] to 1 at [0] group 0,{{$}}
// SPLIT64-NEXT:   box [16] size [16] from 0 at [16] to 1 at [16] group 0 step 1{{$}}
// SPLIT64-NEXT: ]

// SPLIT127:      reshard.pieces @w rank 1 holders {{\[\[}}0]] [
// SPLIT127-NEXT:   box [0] size [31] from 0 at [0] to 1 at [0] group 0,{{$}}
// SPLIT127-NEXT:   box [31] size [1] from 0 at [31] to 1 at [31] group 0 step 1{{$}}
// SPLIT127-NEXT: ]

// SPLIT128:      reshard.pieces @w rank 1 holders {{\[\[}}0]] [
// SPLIT128-NEXT:   box [0] size [32] from 0 at [0] to 1 at [0] group 0{{$}}
// SPLIT128-NEXT: ]

// EXEC-SPLIT2: checked 1 tensors, 2 pieces, 32 destination elements: all correct

//--- f64.mlir
// 2 x f64 = 16 B with a budget of 8: one element per piece, one per step.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[]]> to @b <[[]]>
    : tensor<2xf64> -> tensor<2xf64>

// F64:      reshard.pieces @w rank 1 holders {{\[\[}}0]] [
// F64-NEXT:   box [0] size [1] from 0 at [0] to 1 at [0] group 0,{{$}}
// F64-NEXT:   box [1] size [1] from 0 at [1] to 1 at [1] group 0 step 1{{$}}
// F64-NEXT: ]

// EXEC-F64: checked 1 tensors, 2 pieces, 2 destination elements: all correct

//--- slabs.mlir
// 6 x 2 x f32 = 48 B, rank 0 to rank 1, budget 16. A row is 8 B, so whole
// slabs of 16 / 8 = 2 rows: [0, 2), [2, 4), [4, 6), 16 B each. Each fills
// both ranks' budget: steps 0, 1, 2.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @v from @a <[[], []]> to @b <[[], []]>
    : tensor<6x2xf32> -> tensor<6x2xf32>

// SLABS:      reshard.pieces @v rank 2 holders {{\[\[}}0]] [
// SLABS-NEXT:   box [0, 0] size [2, 2] from 0 at [0, 0] to 1 at [0, 0] group 0,{{$}}
// SLABS-NEXT:   box [2, 0] size [2, 2] from 0 at [2, 0] to 1 at [2, 0] group 0 step 1,{{$}}
// SLABS-NEXT:   box [4, 0] size [2, 2] from 0 at [4, 0] to 1 at [4, 0] group 0 step 2{{$}}
// SLABS-NEXT: ]

// EXEC-SLABS: checked 1 tensors, 3 pieces, 12 destination elements: all correct

//--- rows.mlir
// 2 x 6 x f32 = 48 B, rank 0 to rank 1, budget 16. A row is 24 B, more
// than the budget: one row at a time, split along dim 1 into 16 / 4 = 4
// columns: [r, 0] size [1, 4] (16 B) and [r, 4] size [1, 2] (8 B) for
// r = 0, 1. Placed largest first, input order on ties:
//   [0, 0] 16 B -> step 0 (full).  [1, 0] 16 B -> step 1 (full).
//   [0, 4]  8 B -> step 2.         [1, 4]  8 B -> step 2 (8 + 8 = 16).

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[], []]> to @b <[[], []]>
    : tensor<2x6xf32> -> tensor<2x6xf32>

// ROWS:      reshard.pieces @w rank 2 holders {{\[\[}}0]] [
// ROWS-NEXT:   box [0, 0] size [1, 4] from 0 at [0, 0] to 1 at [0, 0] group 0,{{$}}
// ROWS-NEXT:   box [0, 4] size [1, 2] from 0 at [0, 4] to 1 at [0, 4] group 0 step 2,{{$}}
// ROWS-NEXT:   box [1, 0] size [1, 4] from 0 at [1, 0] to 1 at [1, 0] group 0 step 1,{{$}}
// ROWS-NEXT:   box [1, 4] size [1, 2] from 0 at [1, 4] to 1 at [1, 4] group 0 step 2{{$}}
// ROWS-NEXT: ]

// EXEC-ROWS: checked 1 tensors, 4 pieces, 12 destination elements: all correct

//--- fan-out.mlir
// Rank 0 holds all 7 x f32 and sends tp = 3 shards to ranks 1, 2, 3:
// [0, 3) 12 B, [3, 6) 12 B, [6, 7) 4 B. With max-ops-per-step=2, rank 0
// sends to 1 and 2 in step 0 (2 peers); the third peer, 3, waits for
// step 1 even though it is the smallest and bytes would fit. With 3 ops,
// all in step 0.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [3] axes = ["tp"] ranks = [1, 2, 3]
reshard.redistribute @w from @a <[[]]> to @b <[[tp]]>
    : tensor<7xf32> -> tensor<7xf32>

// FAN-OUT:      reshard.pieces @w rank 1 holders {{\[\[}}0]] [
// FAN-OUT-NEXT:   box [0] size [3] from 0 at [0] to 1 at [0] group 0,{{$}}
// FAN-OUT-NEXT:   box [3] size [3] from 0 at [3] to 2 at [0] group 0,{{$}}
// FAN-OUT-NEXT:   box [6] size [1] from 0 at [6] to 3 at [0] group 0 step 1{{$}}
// FAN-OUT-NEXT: ]

// FAN-OUT-3:      reshard.pieces @w rank 1 holders {{\[\[}}0]] [
// FAN-OUT-3-NEXT:   box [0] size [3] from 0 at [0] to 1 at [0] group 0,{{$}}
// FAN-OUT-3-NEXT:   box [3] size [3] from 0 at [3] to 2 at [0] group 0,{{$}}
// FAN-OUT-3-NEXT:   box [6] size [1] from 0 at [6] to 3 at [0] group 0{{$}}
// FAN-OUT-3-NEXT: ]

// EXEC-FAN-OUT: checked 1 tensors, 3 pieces, 7 destination elements: all correct

//--- fan-in.mlir
// The mirror image: tp = 3 on ranks 0, 1, 2 (12, 12 and 4 B) all go to
// rank 3. With max-ops-per-step=2 rank 3 receives from 0 and 1 in step 0
// and from 2 in step 1.

reshard.mesh @a shape = [3] axes = ["tp"] ranks = [0, 1, 2]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [3]
reshard.redistribute @w from @a <[[tp]]> to @b <[[]]>
    : tensor<7xf32> -> tensor<7xf32>

// FAN-IN:      reshard.pieces @w rank 1 holders {{\[\[}}0], [1], [2]] [
// FAN-IN-NEXT:   box [0] size [3] from 0 at [0] to 3 at [0] group 0,{{$}}
// FAN-IN-NEXT:   box [3] size [3] from 1 at [0] to 3 at [3] group 1,{{$}}
// FAN-IN-NEXT:   box [6] size [1] from 2 at [0] to 3 at [6] group 2 step 1{{$}}
// FAN-IN-NEXT: ]

// EXEC-FAN-IN: checked 1 tensors, 3 pieces, 7 destination elements: all correct

//--- relay.mlir
// Domains of 4. Rank 0 (domain 0) holds everything. Three tensors:
//   @big: 8 x f32 = 32 B to rank 7 (domain 1).
//   @w: 4 x f32 = 16 B to dp = 3 replicas on ranks 4, 5, 6 (domain 1).
//   @local: 64 x f32 = 256 B from rank 5 to itself.
// Selection: @big crosses 0 -> 7 (NIC in 7 = 32). @w crosses once; entry
// among 4, 5, 6 (NIC in all 0) -> 4; 5 and 6 get it via 4 in step 1.
// @local is a local copy.
// Schedule, budget 32, 4 ops:
//   @local: a local copy, no staging: step 0 and not split, though 256 B
//     is over the budget.
//   direct transfers, largest first:
//     @big 0 -> 7, 32 B: step 0 (rank 0 now full in step 0).
//     @w 0 -> 4, 16 B: step 0 would give rank 0 48 B > 32 -> step 1.
//   forwards, after the entry's step 1:
//     @w 4 -> 5: step 2 (4: 16, 5: 16).  @w 4 -> 6: step 2 (4: 32, 6: 16).

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 100.0 nic_GBps_per_gpu = 10.0
reshard.mesh @src shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @seven shape = [1] axes = ["x"] ranks = [7]
reshard.mesh @dp shape = [3] axes = ["dp"] ranks = [4, 5, 6]
reshard.mesh @five shape = [1] axes = ["x"] ranks = [5]
reshard.redistribute @big from @src <[[]]> to @seven <[[]]> topology @t
    : tensor<8xf32> -> tensor<8xf32>
reshard.redistribute @w from @src <[[]]> to @dp <[[]]> topology @t
    : tensor<4xf32> -> tensor<4xf32>
reshard.redistribute @local from @five <[[]]> to @five <[[]]> topology @t
    : tensor<64xf32> -> tensor<64xf32>

// RELAY-UNSCHEDULED:      reshard.pieces @w rank 1 holders {{\[\[}}0]] [
// RELAY-UNSCHEDULED-NEXT:   box [0] size [4] from 0 at [0] to 4 at [0] group 0,{{$}}
// RELAY-UNSCHEDULED-NEXT:   box [0] size [4] from 0 at [0] to 5 at [0] group 0 via 4 step 1,{{$}}
// RELAY-UNSCHEDULED-NEXT:   box [0] size [4] from 0 at [0] to 6 at [0] group 0 via 4 step 1{{$}}
// RELAY-UNSCHEDULED-NEXT: ]

// RELAY:      reshard.pieces @big rank 1 holders {{\[\[}}0]] [
// RELAY-NEXT:   box [0] size [8] from 0 at [0] to 7 at [0] group 0{{$}}
// RELAY-NEXT: ]
// RELAY:      reshard.pieces @w rank 1 holders {{\[\[}}0]] [
// RELAY-NEXT:   box [0] size [4] from 0 at [0] to 4 at [0] group 0 step 1,{{$}}
// RELAY-NEXT:   box [0] size [4] from 0 at [0] to 5 at [0] group 0 via 4 step 2,{{$}}
// RELAY-NEXT:   box [0] size [4] from 0 at [0] to 6 at [0] group 0 via 4 step 2{{$}}
// RELAY-NEXT: ]
// RELAY:      reshard.pieces @local rank 1 holders {{\[\[}}5]] [
// RELAY-NEXT:   box [0] size [64] from 5 at [0] to 5 at [0] group 0{{$}}
// RELAY-NEXT: ]

// 8 + 3 x 4 + 64 destination elements.
// EXEC-RELAY: checked 3 tensors, 5 pieces, 84 destination elements: all correct

//--- relay-split.mlir
// Domains of 4. Rank 0 holds 8 x f32 = 32 B; dp = 2 replicas on ranks 4, 5
// (domain 1) need it: one crossing into 4 (equal NIC in, lowest), 5 via 4.
// Budget 16 splits the box into [0, 4) and [4, 8), 16 B each, in the
// crossing and in the forward alike.
//   direct 0 -> 4: [0, 4) step 0; [4, 8) step 1 (rank 0 full in step 0).
//   forward 4 -> 5 [0, 4): after step 0; step 1 has 4 full (receiving
//     [4, 8)) -> step 2.
//   forward 4 -> 5 [4, 8): after step 1; step 2 has 4 full -> step 3.

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 100.0 nic_GBps_per_gpu = 10.0
reshard.mesh @src shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @dp shape = [2] axes = ["dp"] ranks = [4, 5]
reshard.redistribute @w from @src <[[]]> to @dp <[[]]> topology @t
    : tensor<8xf32> -> tensor<8xf32>

// RELAY-SPLIT:      reshard.pieces @w rank 1 holders {{\[\[}}0]] [
// RELAY-SPLIT-NEXT:   box [0] size [4] from 0 at [0] to 4 at [0] group 0,{{$}}
// RELAY-SPLIT-NEXT:   box [4] size [4] from 0 at [4] to 4 at [4] group 0 step 1,{{$}}
// RELAY-SPLIT-NEXT:   box [0] size [4] from 0 at [0] to 5 at [0] group 0 via 4 step 2,{{$}}
// RELAY-SPLIT-NEXT:   box [4] size [4] from 0 at [4] to 5 at [4] group 0 via 4 step 3{{$}}
// RELAY-SPLIT-NEXT: ]

// EXEC-RELAY-SPLIT: checked 1 tensors, 4 pieces, 16 destination elements: all correct
