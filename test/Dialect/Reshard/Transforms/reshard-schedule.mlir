// reshard-schedule: steps within a staging budget and an operation bound.
// Each case is a module of its own (split-file). Expected schedules are
// worked out by hand from the pass description (Passes.td,
// docs/Routing.md): everything one rank sends another in one phase is one
// stream. When no rank is in more streams than max-ops-per-step, all run
// at once at one pace: each moves ceil(bytes / N) a step, N the least step
// count at which every rank's quotas add up to at most the budget B; a
// relay's stream starts at the first step where each of its items goes out
// after the last byte of what brought it arrived. Otherwise a rank in K
// streams runs at most C = min(K, max-ops-per-step, B) of them in any
// step, each at floor(B / max(C_sender, C_receiver)) bytes a step, placed
// longest first (phase 0 before relays, then (sender, receiver) order on
// ties) at the earliest start where neither end already runs C streams,
// and a relay's streams start after the last step of its phase-0
// receives. With receives-ahead a rank also stages the next step's
// receives while a step is in flight, so a receive's quota counts twice
// (and C and the share come from B / 2). Local copies need no stream. Every schedule is then executed by
// reshard-run (the reference pieces, and the lowered plan on the engine,
// which cuts each stream's boxes at the quota, mid-row where it falls).

// RUN: rm -rf %t && split-file %s %t

// A 128-byte stream: 2 steps with a budget of 64 and of 127, 1 with 128.
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | FileCheck %s --check-prefix=SPLIT64
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | reshard-opt | FileCheck %s --check-prefix=SPLIT64
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | reshard-run - --check | FileCheck %s --check-prefix=EXEC-SPLIT
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=64 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-SPLIT
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=127 | FileCheck %s --check-prefix=SPLIT127
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=127 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-SPLIT
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=128 | FileCheck %s --check-prefix=SPLIT128
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule | FileCheck %s --check-prefix=DEFAULT

// Receives posted ahead: rank 1 stages each step's slice and the next one's.
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=64 receives-ahead=true" | FileCheck %s --check-prefix=AHEAD64
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=64 receives-ahead=true" | reshard-opt | FileCheck %s --check-prefix=AHEAD64
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=64 receives-ahead=true" | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-SPLIT
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=127 receives-ahead=true" | FileCheck %s --check-prefix=AHEAD127

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
// RUN: reshard-opt %t/relay-overlap.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=16 receives-ahead=true" | FileCheck %s --check-prefix=AHEAD-OVERLAP
// RUN: reshard-opt %t/relay-overlap.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=16 receives-ahead=true" | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC-RELAY-OVERLAP
// RUN: reshard-opt %t/relay-overlap.mlir --reshard-intersect --reshard-select-sources --reshard-schedule="staging-budget=16 receives-ahead=true" --convert-reshard-to-runtime | FileCheck %s --check-prefix=AHEAD-LOWERED

//--- split.mlir
// Rank 0 sends all 32 x f32 = 128 B to rank 1 (no topology: network). One
// stream, so N = ceil(128 / B) and the quota ceil(128 / N):
//   budget 64 and 127: 2 steps of 64 B.
//   budget 128 (and the 1 GiB default): one step of 128 B.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[]]> to @b <[[]]>
    : tensor<32xf32> -> tensor<32xf32>

// SPLIT64:      reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
// SPLIT64-NEXT:   stream 0 -> 1 phase 0 start 0 quota 64{{$}}
// SPLIT64-NEXT: ]
// SPLIT127:      reshard.schedule staging_budget = 127 max_ops_per_step = 1024 [
// SPLIT127-NEXT:   stream 0 -> 1 phase 0 start 0 quota 64{{$}}
// SPLIT127-NEXT: ]
// SPLIT128:      reshard.schedule staging_budget = 128 max_ops_per_step = 1024 [
// SPLIT128-NEXT:   stream 0 -> 1 phase 0 start 0 quota 128{{$}}
// SPLIT128-NEXT: ]
// DEFAULT:      reshard.schedule staging_budget = 1073741824 max_ops_per_step = 1024 [
// DEFAULT-NEXT:   stream 0 -> 1 phase 0 start 0 quota 128{{$}}
// DEFAULT-NEXT: ]

// With receives ahead, N is the least with 2 ceil(128 / N) <= B: budget 64,
// 4 steps of 32 B; 127, 3 steps of 43 B (2 x 43 <= 127).
// AHEAD64:      reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
// AHEAD64-NEXT:   stream 0 -> 1 phase 0 start 0 quota 32{{$}}
// AHEAD64-NEXT: ] {receives_ahead}
// AHEAD127:      reshard.schedule staging_budget = 127 max_ops_per_step = 1024 [
// AHEAD127-NEXT:   stream 0 -> 1 phase 0 start 0 quota 43{{$}}
// AHEAD127-NEXT: ] {receives_ahead}

// EXEC-SPLIT: checked 1 tensors, 1 pieces, 32 destination elements: all correct

//--- f64.mlir
// 2 x f64 = 16 B with a budget of 8: one element a step, 2 steps.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[]]> to @b <[[]]>
    : tensor<2xf64> -> tensor<2xf64>

// F64:      reshard.schedule staging_budget = 8 max_ops_per_step = 1024 [
// F64-NEXT:   stream 0 -> 1 phase 0 start 0 quota 8{{$}}
// F64-NEXT: ]

// EXEC-F64: checked 1 tensors, 1 pieces, 2 destination elements: all correct

//--- slabs.mlir
// 6 x 2 x f32 = 48 B, rank 0 to rank 1, budget 16: 3 steps of two whole
// 8-byte rows each.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @v from @a <[[], []]> to @b <[[], []]>
    : tensor<6x2xf32> -> tensor<6x2xf32>

// SLABS:      reshard.schedule staging_budget = 16 max_ops_per_step = 1024 [
// SLABS-NEXT:   stream 0 -> 1 phase 0 start 0 quota 16{{$}}
// SLABS-NEXT: ]

// EXEC-SLABS: checked 1 tensors, 1 pieces, 12 destination elements: all correct

//--- rows.mlir
// 2 x 6 x f32 = 48 B, rank 0 to rank 1, budget 20: N = 3, quota 16.
// A row is 24 B, so step 0 takes row 0 columns 0-3, step 1 row 0 columns
// 4-5 and row 1 columns 0-1, step 2 row 1 columns 2-5: the engine packs
// and unpacks partial rows (reshard-run --engine checks every element).

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[], []]> to @b <[[], []]>
    : tensor<2x6xf32> -> tensor<2x6xf32>

// ROWS:      reshard.schedule staging_budget = 20 max_ops_per_step = 1024 [
// ROWS-NEXT:   stream 0 -> 1 phase 0 start 0 quota 16{{$}}
// ROWS-NEXT: ]

// EXEC-ROWS: checked 1 tensors, 1 pieces, 12 destination elements: all correct

//--- fan-out.mlir
// Rank 0 holds all 7 x f32 and sends tp = 3 shards to ranks 1, 2, 3:
// [0, 3) 12 B, [3, 6) 12 B, [6, 7) 4 B. Rank 0 is in 3 streams; with
// max-ops-per-step=2 it runs 2 at once (C_0 = 2, the receivers 1), so the
// quota is 2^30 / 2. All take one step; in (receiver) order 0 -> 1 and
// 0 -> 2 fill rank 0's step 0, and 0 -> 3 waits for step 1 although its
// bytes would fit. With 3 ops all run at once, in N = 1 step: each
// stream's quota is its bytes.

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [3] axes = ["tp"] ranks = [1, 2, 3]
reshard.redistribute @w from @a <[[]]> to @b <[[tp]]>
    : tensor<7xf32> -> tensor<7xf32>

// FAN-OUT:      reshard.schedule staging_budget = 1073741824 max_ops_per_step = 2 [
// FAN-OUT-NEXT:   stream 0 -> 1 phase 0 start 0 quota 536870912,
// FAN-OUT-NEXT:   stream 0 -> 2 phase 0 start 0 quota 536870912,
// FAN-OUT-NEXT:   stream 0 -> 3 phase 0 start 1 quota 536870912{{$}}
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
// FAN-IN-NEXT:   stream 0 -> 3 phase 0 start 0 quota 536870912,
// FAN-IN-NEXT:   stream 1 -> 3 phase 0 start 0 quota 536870912,
// FAN-IN-NEXT:   stream 2 -> 3 phase 0 start 1 quota 536870912{{$}}
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
// budget 32 and T_0 = T_4 = 48 B, N = 2: quotas 8 (0 -> 4), 16 (0 -> 7)
// and 8 (each relay). @w's last byte reaches rank 4 in step 1, so the
// relays start at step 2. Rank 0 stages 8 + 16 B a step, rank 4 8 + 8.

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
// it from 4. Rank 4 moves T_4 = 64 B in its 2 streams, so with budget 16
// N = 4 and both quotas are 8. 0 -> 4 runs steps 0-3; the relay cuts
// through, forwarding each byte after the step it arrived in: from step 2
// (byte b arrives in step b / 8 and leaves in 2 + b / 8; the linear bound
// of docs/Runtime.md asks one step more than the exact start 1). Before cut
// through it waited for the last byte, until step 4.

reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 100.0 nic_GBps_per_gpu = 10.0
reshard.mesh @src shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @dp shape = [2] axes = ["dp"] ranks = [4, 5]
reshard.redistribute @w from @src <[[]]> to @dp <[[]]> topology @t
    : tensor<8xf32> -> tensor<8xf32>

// RELAY-SPLIT:      reshard.schedule staging_budget = 16 max_ops_per_step = 1024 [
// RELAY-SPLIT-NEXT:   stream 0 -> 4 phase 0 start 0 quota 8,
// RELAY-SPLIT-NEXT:   stream 4 -> 5 phase 1 start 2 quota 8{{$}}
// RELAY-SPLIT-NEXT: ]

// EXEC-RELAY-SPLIT: checked 1 tensors, 2 pieces, 16 destination elements: all correct

//--- relay-overlap.mlir
// Domains of 4. Rank 0 holds @w (8 x f32 = 32 B, needed by dp = 2
// replicas on ranks 4 and 5) and @small (4 x f32 = 16 B, needed by rank 4).
// @w crosses once, into rank 4, and 4 relays it to 5. Stream 0 -> 4 is
// [@w 32 B, @small 16 B]; T_4 = 48 + 32, so with budget 16 N = 6: quotas 8
// and ceil(32 / 6) = 6 (8 + 6 <= 16; N = 5 would need 10 + 7). @w arrives
// in steps 0-3 (byte b in step b / 8); the relay cuts through from step 2
// (byte b leaves in 2 + b / 6), while rank 4 still receives the rest of @w
// and then @small in steps 4 and 5.

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
// RELAY-OVERLAP-NEXT:   stream 0 -> 4 phase 0 start 0 quota 8,
// RELAY-OVERLAP-NEXT:   stream 4 -> 5 phase 1 start 2 quota 6{{$}}
// RELAY-OVERLAP-NEXT: ]

// With receives ahead rank 4 stages 2 x 48 + 32 over N steps: N = 8, quotas
// 6 and 4 (2 x 6 + 4 <= 16; N = 7 would need 2 x 7 + 5). Lowered, the plan
// says so, and rank 4's largest step stages its receive (6, aligned to 16),
// its send (16) and the next step's receive (16): 48.
// AHEAD-OVERLAP:      reshard.schedule staging_budget = 16 max_ops_per_step = 1024 [
// AHEAD-OVERLAP-NEXT:   stream 0 -> 4 phase 0 start 0 quota 6,
// AHEAD-OVERLAP-NEXT:   stream 4 -> 5 phase 1 start 2 quota 4{{$}}
// AHEAD-OVERLAP-NEXT: ] {receives_ahead}
// AHEAD-LOWERED: reshard_rt.plan @reshard_plan {{.*}} staging_budget = 16 max_ops_per_step = 1024 receives_ahead {
// AHEAD-LOWERED: reshard_rt.rank 4 workspace = 48 {

// EXEC-RELAY-OVERLAP: checked 2 tensors, 3 pieces, 20 destination elements: all correct
