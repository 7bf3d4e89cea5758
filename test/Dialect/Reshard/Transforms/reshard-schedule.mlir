// reshard-schedule: steps within a staging budget and an operation bound.
// Each case is a module of its own (split-file). Expected schedules are
// worked out by hand from the pass description (Passes.td,
// docs/Routing.md): everything one rank sends another in one phase is one
// stream. When no rank is in more streams than max-ops-per-step, all run
// at once at one pace: each moves ceil(bytes / N) a step, N the least step
// count at which every rank's quotas add up to at most the budget B, a
// receive's quota counted twice (a rank posts the next step's receives
// while a step is in flight, so both are staged at once); a relay's stream
// starts at the first step where each of its items goes out after the last
// byte of what brought it arrived. Otherwise a rank in K streams runs at
// most C = min(K, max-ops-per-step, B / 2) of them in any step, each at
// floor((B / 2) / max(C_sender, C_receiver)) bytes a step, placed
// longest first (phase 0 before relays, then (sender, receiver) order on
// ties) at the earliest start where neither end already runs C streams,
// and a relay's streams start after the last step of its phase-0
// receives. Local copies need no stream. Every schedule is then executed by
// reshard-run (the reference pieces, and the lowered plan on the engine,
// which cuts each stream's boxes at the quota, mid-row where it falls).

// RUN: rm -rf %t && split-file %s %t

// A 128-byte stream: 4 steps with a budget of 64, 3 with 127, 2 with 128.
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | FileCheck %s --check-prefix=SPLIT64
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | reshard-opt | FileCheck %s --check-prefix=SPLIT64
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-SPLIT
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-SPLIT
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=127 | FileCheck %s --check-prefix=SPLIT127
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=127 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-SPLIT
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=128 | FileCheck %s --check-prefix=SPLIT128
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule | FileCheck %s --check-prefix=DEFAULT

// Element sizes, whole rows and rows cut in the middle.
// RUN: reshard-opt %t/f64.mlir --reshard-intersect --reshard-schedule=staging-budget=8 | FileCheck %s --check-prefix=F64
// RUN: reshard-opt %t/f64.mlir --reshard-intersect --reshard-schedule=staging-budget=8 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-F64
// RUN: reshard-opt %t/slabs.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | FileCheck %s --check-prefix=SLABS
// RUN: reshard-opt %t/slabs.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-SLABS
// RUN: reshard-opt %t/rows.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=20 | FileCheck %s --check-prefix=ROWS
// RUN: reshard-opt %t/rows.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=20 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-ROWS
// RUN: reshard-opt %t/rows.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=20 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-ROWS

// Operations per step: fan-out and fan-in.
// RUN: reshard-opt %t/fan-out.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=max-ops-per-step=2 | FileCheck %s --check-prefix=FAN-OUT
// RUN: reshard-opt %t/fan-out.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=max-ops-per-step=2 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-FAN-OUT
// RUN: reshard-opt %t/fan-out.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=max-ops-per-step=3 | FileCheck %s --check-prefix=FAN-OUT-3
// RUN: reshard-opt %t/fan-in.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=max-ops-per-step=2 | FileCheck %s --check-prefix=FAN-IN
// RUN: reshard-opt %t/fan-in.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=max-ops-per-step=2 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-FAN-IN

// Relays after their receives; local copies outside the schedule.
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources --reshard-expand | FileCheck %s --check-prefix=RELAY-PIECES
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=32 max-ops-per-step=4" | FileCheck %s --check-prefix=RELAY
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=32 max-ops-per-step=4" | reshard-run - --check | FileCheck %s --check-prefix=EXEC-RELAY
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=32 max-ops-per-step=4" | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-RELAY

// A relayed stream longer than one step.
// RUN: reshard-opt %t/relay-split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | FileCheck %s --check-prefix=RELAY-SPLIT
// RUN: reshard-opt %t/relay-split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-RELAY-SPLIT

// A relay that forwards while it still receives.
// RUN: reshard-opt %t/relay-overlap.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | FileCheck %s --check-prefix=RELAY-OVERLAP
// RUN: reshard-opt %t/relay-overlap.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=16 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-RELAY-OVERLAP

//--- split.mlir
// Rank 0 sends all 32 x f32 = 128 B to rank 1 (no topology: network). One
// stream, which rank 1 stages twice (a step's slice and the next one's), so
// N is the least with 2 ceil(128 / N) <= B and the quota ceil(128 / N):
//   budget 64: 4 steps of 32 B; 127: 3 steps of 43 B (2 x 43 <= 127).
//   budget 128: 2 steps of 64 B; the 1 GiB default: one step of 128 B.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[]]> to @b <[[]]>
    : tensor<32xf32> -> tensor<32xf32>

// SPLIT64:      reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
// SPLIT64-NEXT:   stream 0 -> 1 phase 0 start 0 quota 32{{$}}
// SPLIT64-NEXT: ]
// SPLIT127:      reshard.schedule staging_budget = 127 max_ops_per_step = 1024 [
// SPLIT127-NEXT:   stream 0 -> 1 phase 0 start 0 quota 43{{$}}
// SPLIT127-NEXT: ]
// SPLIT128:      reshard.schedule staging_budget = 128 max_ops_per_step = 1024 [
// SPLIT128-NEXT:   stream 0 -> 1 phase 0 start 0 quota 64{{$}}
// SPLIT128-NEXT: ]
// DEFAULT:      reshard.schedule staging_budget = 1073741824 max_ops_per_step = 1024 [
// DEFAULT-NEXT:   stream 0 -> 1 phase 0 start 0 quota 128{{$}}
// DEFAULT-NEXT: ]

// EXEC-SPLIT: checked 1 tensors, 1 pieces, 32 destination elements: all correct

//--- f64.mlir
// 2 x f64 = 16 B with a budget of 8: half an element a step (2 x 4 <= 8),
// 4 steps; the engine cuts elements at any byte.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[]]> to @b <[[]]>
    : tensor<2xf64> -> tensor<2xf64>

// F64:      reshard.schedule staging_budget = 8 max_ops_per_step = 1024 [
// F64-NEXT:   stream 0 -> 1 phase 0 start 0 quota 4{{$}}
// F64-NEXT: ]

// EXEC-F64: checked 1 tensors, 1 pieces, 2 destination elements: all correct

//--- slabs.mlir
// 6 x 2 x f32 = 48 B, rank 0 to rank 1, budget 16: 6 steps of one whole
// 8-byte row each (2 x 8 <= 16).

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @v from @a <[[], []]> to @b <[[], []]>
    : tensor<6x2xf32> -> tensor<6x2xf32>

// SLABS:      reshard.schedule staging_budget = 16 max_ops_per_step = 1024 [
// SLABS-NEXT:   stream 0 -> 1 phase 0 start 0 quota 8{{$}}
// SLABS-NEXT: ]

// EXEC-SLABS: checked 1 tensors, 1 pieces, 12 destination elements: all correct

//--- rows.mlir
// 2 x 6 x f32 = 48 B, rank 0 to rank 1, budget 20: N = 5, quota 10
// (2 x 10 <= 20). A row is 24 B, so steps cut rows and elements: step 0
// takes row 0 columns 0-1 and half of column 2, step 2 the end of row 0 and
// the start of row 1: the engine packs and unpacks partial rows
// (reshard-run --engine checks every element).

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[], []]> to @b <[[], []]>
    : tensor<2x6xf32> -> tensor<2x6xf32>

// ROWS:      reshard.schedule staging_budget = 20 max_ops_per_step = 1024 [
// ROWS-NEXT:   stream 0 -> 1 phase 0 start 0 quota 10{{$}}
// ROWS-NEXT: ]

// EXEC-ROWS: checked 1 tensors, 1 pieces, 12 destination elements: all correct

//--- fan-out.mlir
// Rank 0 holds all 7 x f32 and sends tp = 3 shards to ranks 1, 2, 3:
// [0, 3) 12 B, [3, 6) 12 B, [6, 7) 4 B. Rank 0 is in 3 streams; with
// max-ops-per-step=2 it runs 2 at once (C_0 = 2, the receivers 1), so the
// quota is 2^29 / 2. All take one step; in (receiver) order 0 -> 1 and
// 0 -> 2 fill rank 0's step 0, and 0 -> 3 waits for step 1 although its
// bytes would fit. With 3 ops all run at once, in N = 1 step: each
// stream's quota is its bytes.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [3] axes = ["tp"] ranks = [1, 2, 3]
reshard.redistribute @w from @a <[[]]> to @b <[[tp]]>
    : tensor<7xf32> -> tensor<7xf32>

// FAN-OUT:      reshard.schedule staging_budget = 1073741824 max_ops_per_step = 2 [
// FAN-OUT-NEXT:   stream 0 -> 1 phase 0 start 0 quota 268435456,
// FAN-OUT-NEXT:   stream 0 -> 2 phase 0 start 0 quota 268435456,
// FAN-OUT-NEXT:   stream 0 -> 3 phase 0 start 1 quota 268435456{{$}}
// FAN-OUT-NEXT: ]

// FAN-OUT-3:      reshard.schedule staging_budget = 1073741824 max_ops_per_step = 3 [
// FAN-OUT-3-NEXT:   stream 0 -> 1 phase 0 start 0 quota 12,
// FAN-OUT-3-NEXT:   stream 0 -> 2 phase 0 start 0 quota 12,
// FAN-OUT-3-NEXT:   stream 0 -> 3 phase 0 start 0 quota 4{{$}}
// FAN-OUT-3-NEXT: ]

// EXEC-FAN-OUT: checked 1 tensors, 3 pieces, 7 destination elements: all correct

//--- fan-in.mlir
// The mirror image: tp = 3 on ranks 0, 1, 2 (12, 12 and 4 B) all go to
// rank 3. With max-ops-per-step=2, C_3 = 2: rank 3 receives from 0 and 1
// in step 0 and from 2 in step 1.

reshard.mesh @a shape = [3] axes = ["tp"] ranks = [0, 1, 2]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [3]
reshard.redistribute @w from @a <[[tp]]> to @b <[[]]>
    : tensor<7xf32> -> tensor<7xf32>

// FAN-IN:      reshard.schedule staging_budget = 1073741824 max_ops_per_step = 2 [
// FAN-IN-NEXT:   stream 0 -> 3 phase 0 start 0 quota 268435456,
// FAN-IN-NEXT:   stream 1 -> 3 phase 0 start 0 quota 268435456,
// FAN-IN-NEXT:   stream 2 -> 3 phase 0 start 1 quota 268435456{{$}}
// FAN-IN-NEXT: ]

// EXEC-FAN-IN: checked 1 tensors, 3 pieces, 7 destination elements: all correct

//--- relay.mlir
// Domains of 4. Rank 0 (domain 0) holds everything. Three tensors:
//   @big: 8 x f32 = 32 B to rank 7 (domain 1).
//   @w: 4 x f32 = 16 B to dp = 3 replicas on ranks 4, 5, 6 (domain 1).
//   @local: 64 x f32 = 256 B from rank 5 to itself.
// Selection: @big crosses 0 -> 7. @w crosses once; entry among 4, 5, 6
// (NIC in all 0) -> 4; 5 and 6 get it from 4 (phase 1). @local is a local
// copy, in no stream.
// Streams: 0 -> 4 (16 B), 0 -> 7 (32 B), 4 -> 5 and 4 -> 6 (16 B each,
// phase 1). Rank 0 is in 2 streams, rank 4 in 3 (at most 4 ops). With
// budget 32, staged T_0 = 48 B and T_4 = T_7 = 64 B (receives twice), N =
// 2: quotas 8 (0 -> 4), 16 (0 -> 7) and 8 (each relay). @w's last byte
// reaches rank 4 in step 1, so the relays start at step 2. Rank 0 stages
// 8 + 16 B a step, rank 4 at most 2 x 8 + 8 + 8, rank 7 2 x 16.

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

// RELAY-PIECES:      reshard.pieces @w rank 1 holders {{\[\[}}0]] [
// RELAY-PIECES-NEXT:   box [0] size [4] from 0 at [0] to 4 at [0] group 0,{{$}}
// RELAY-PIECES-NEXT:   box [0] size [4] from 0 at [0] to 5 at [0] group 0 via 4 step 1,{{$}}
// RELAY-PIECES-NEXT:   box [0] size [4] from 0 at [0] to 6 at [0] group 0 via 4 step 1{{$}}
// RELAY-PIECES-NEXT: ]

// RELAY:      reshard.schedule staging_budget = 32 max_ops_per_step = 4 [
// RELAY-NEXT:   stream 0 -> 4 phase 0 start 0 quota 8,
// RELAY-NEXT:   stream 0 -> 7 phase 0 start 0 quota 16,
// RELAY-NEXT:   stream 4 -> 5 phase 1 start 2 quota 8,
// RELAY-NEXT:   stream 4 -> 6 phase 1 start 2 quota 8{{$}}
// RELAY-NEXT: ]

// 8 + 3 x 4 + 64 destination elements.
// EXEC-RELAY: checked 3 tensors, 5 pieces, 84 destination elements: all correct

//--- relay-split.mlir
// Domains of 4. Rank 0 holds 8 x f32 = 32 B; dp = 2 replicas on ranks 4, 5
// (domain 1) need it: one crossing into 4 (equal NIC in, lowest), 5 gets
// it from 4. Rank 4 stages 3 quotas (its receive twice, its send), so with
// budget 16 N = 7 (3 x ceil(32 / 7) = 15) and both quotas are 5. 0 -> 4
// runs steps 0-6; the relay cuts through, forwarding each byte after the
// step it arrived in: from step 2 (byte b arrives in step b / 5 and leaves
// in 2 + b / 5; the linear bound of docs/Runtime.md asks one step more
// than the exact start 1). Before cut through it waited for the last byte,
// until step 7.

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 100.0 nic_GBps_per_gpu = 10.0
reshard.mesh @src shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @dp shape = [2] axes = ["dp"] ranks = [4, 5]
reshard.redistribute @w from @src <[[]]> to @dp <[[]]> topology @t
    : tensor<8xf32> -> tensor<8xf32>

// RELAY-SPLIT:      reshard.schedule staging_budget = 16 max_ops_per_step = 1024 [
// RELAY-SPLIT-NEXT:   stream 0 -> 4 phase 0 start 0 quota 5,
// RELAY-SPLIT-NEXT:   stream 4 -> 5 phase 1 start 2 quota 5{{$}}
// RELAY-SPLIT-NEXT: ]

// EXEC-RELAY-SPLIT: checked 1 tensors, 2 pieces, 16 destination elements: all correct

//--- relay-overlap.mlir
// Domains of 4. Rank 0 holds @w (8 x f32 = 32 B, needed by dp = 2
// replicas on ranks 4 and 5) and @small (4 x f32 = 16 B, needed by rank 4).
// @w crosses once, into rank 4, and 4 relays it to 5. Stream 0 -> 4 is
// [@w 32 B, @small 16 B]; rank 4 stages 2 x 48 + 32 over N steps, so with
// budget 16 N = 8: quotas 6 and ceil(32 / 8) = 4 (2 x 6 + 4 <= 16; N = 7
// would need 2 x 7 + 5). @w arrives in steps 0-5 (byte b in step b / 6);
// the relay cuts through from step 2 (byte b leaves in 2 + b / 4), while
// rank 4 still receives the rest of @w and then @small in steps 5-7.

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 100.0 nic_GBps_per_gpu = 10.0
reshard.mesh @src shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @four shape = [1] axes = ["x"] ranks = [4]
reshard.mesh @dp shape = [2] axes = ["dp"] ranks = [4, 5]
reshard.redistribute @w from @src <[[]]> to @dp <[[]]> topology @t
    : tensor<8xf32> -> tensor<8xf32>
reshard.redistribute @small from @src <[[]]> to @four <[[]]> topology @t
    : tensor<4xf32> -> tensor<4xf32>

// RELAY-OVERLAP:      reshard.schedule staging_budget = 16 max_ops_per_step = 1024 [
// RELAY-OVERLAP-NEXT:   stream 0 -> 4 phase 0 start 0 quota 6,
// RELAY-OVERLAP-NEXT:   stream 4 -> 5 phase 1 start 2 quota 4{{$}}
// RELAY-OVERLAP-NEXT: ]

// EXEC-RELAY-OVERLAP: checked 2 tensors, 3 pieces, 20 destination elements: all correct
