// convert-reshard-to-runtime: a planned module to a compact reshard_rt
// plan. Each case is a module of its own (split-file); every expected
// descriptor is worked out by hand in the case's comment, from the formats
// in RuntimeBase.td and the rules in Passes.td. Offsets and strides are in
// bytes of the dense row-major shards. The run takes the innermost dim and
// keeps taking the next outer one while the previous dim was taken whole
// (in both shards, for a copy); the remaining outer dims are loops,
// outermost first, count-1 loops dropped, and a loop whose stride is the
// next loop's span merges into it. Each class is written once with its
// pieces; groups list their members; each stream (sender, receiver, phase)
// gets one item list, shared by both ends, and equal lists are stored
// once. Staging in every step: sends first, then receives, one message
// per peer, each at a 16-byte-aligned offset; workspace = the largest
// step. Every output is parsed and verified again by reshard-opt, and run
// by the execution engine (reshard-run --engine) element by element.

// RUN: rm -rf %t && split-file %s %t
// RUN: reshard-opt %t/rows-to-cols.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=R2C
// RUN: reshard-opt %t/contiguous.mlir --reshard-intersect --convert-reshard-to-runtime=plan-name=contig | reshard-opt | FileCheck %s --check-prefix=CONTIG
// RUN: reshard-opt %t/three-d.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=THREE-D
// RUN: reshard-opt %t/count-one.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=COUNT-ONE
// RUN: reshard-opt %t/local-copy.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=COPY
// RUN: reshard-opt %t/group.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=GROUP
// RUN: reshard-opt %t/rotation.mlir --reshard-intersect --reshard-select-sources --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=ROTATION
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=RELAY
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=50 --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=SPLIT
// RUN: reshard-opt %t/scalar.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=SCALAR
// RUN: reshard-opt %t/not-in-mesh.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=NO-MESH
// RUN: reshard-opt %t/empty.mlir --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=EMPTY
// RUN: reshard-opt %t/mesh-only.mlir --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=MESH-ONLY
// RUN: reshard-opt %t/signedness.mlir --reshard-intersect --convert-reshard-to-runtime | FileCheck %s --check-prefix=SIGNEDNESS
// plan-name wins over the module's name.
// RUN: reshard-opt %t/three-d.mlir --reshard-intersect --convert-reshard-to-runtime=plan-name=_renamed2 | FileCheck %s --check-prefix=RENAMED
// RENAMED: reshard_rt.plan @_renamed2 num_ranks = 3
// The lowered plans run right (every destination element checked):
// RUN: reshard-opt %t/rows-to-cols.mlir --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %t/contiguous.mlir --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %t/three-d.mlir --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %t/count-one.mlir --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %t/local-copy.mlir --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %t/group.mlir --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %t/rotation.mlir --reshard-intersect --reshard-select-sources | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %t/relay.mlir --reshard-intersect --reshard-select-sources | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=50 | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %t/scalar.mlir --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %t/not-in-mesh.mlir --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC
// EXEC: all correct

//--- rows-to-cols.mlir
// [4, 6] bf16 (2 B). Source tp = 2 on ranks 0, 1 by rows: shard [2, 6],
// byte strides [12, 2], 24 B. Destination tp = 3 on ranks 2, 3, 4 by
// columns: shard [4, 2], strides [4, 2], 16 B. One class: destination
// combo c (rank 2 + c) takes cols [2c, 2c + 2) of rows [0, 2) from source
// combo 0 and of rows [2, 4) from combo 1, each a [2, 2] box.
//   pack, at source [0, 2c]: dim 1 is 2 of 6 (not whole), so run = 2 x 2
//     = 4 B and stop; dim 0 is a loop of 2 rows, stride 12:
//     <+4c run 4 x [2 by 12]>.
//   unpack, at destination [0, 0] or [2, 0]: dim 1 is whole (2 of 2), so
//     dim 0 joins the run: 2 x 2 x 2 = 8 B, no loops: <+0 run 8>, <+8 run 8>.
//   copy: both at once; the source's dim 1 is not whole, so the run is
//     4 B with the loop at both strides: <+4c -> +0 run 4 x [2 by 12 -> 4]>.
// Six streams of one 8-byte item each (one per sender and receiver),
// unscheduled: whole in step 0. Senders stage 3 sends at 0, 16, 32 -> 48;
// receivers 2 receives at 0, 16 -> 32.
reshard.mesh @rows shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @cols shape = [3] axes = ["tp"] ranks = [2, 3, 4]
reshard.redistribute @w from @rows <[[tp], []]> to @cols <[[], [tp]]>
    : tensor<4x6xbf16> -> tensor<4x6xbf16>

// R2C:      reshard_rt.plan @reshard_plan num_ranks = 5 tensors = ["w"] dtypes = ["bf16"] fingerprint = {{-?[0-9]+}} {
// R2C-NEXT: reshard_rt.mesh 0 ranks [0, 1]
// R2C-NEXT: reshard_rt.mesh 1 ranks [2, 3, 4]
// R2C-NEXT: reshard_rt.class 0 element_bytes 2 rank 2 src combos [0, 1] shapes {{\[\[}}2, 6], [2, 6{{\]\]}} dst combos [0, 1, 2] shapes {{\[\[}}4, 2], [4, 2], [4, 2{{\]\]}} {
// R2C-NEXT: reshard_rt.piece dst 0 src 0 size [2, 2] at [0, 0] from [0, 0] pack <+0 run 4 x [2 by 12]> unpack <+0 run 8> copy <+0 -> +0 run 4 x [2 by 12 -> 4]>
// R2C-NEXT: reshard_rt.piece dst 0 src 1 size [2, 2] at [2, 0] from [0, 0] pack <+0 run 4 x [2 by 12]> unpack <+8 run 8> copy <+0 -> +8 run 4 x [2 by 12 -> 4]>
// R2C-NEXT: reshard_rt.piece dst 1 src 0 size [2, 2] at [0, 0] from [0, 2] pack <+4 run 4 x [2 by 12]> unpack <+0 run 8> copy <+4 -> +0 run 4 x [2 by 12 -> 4]>
// R2C-NEXT: reshard_rt.piece dst 1 src 1 size [2, 2] at [2, 0] from [0, 2] pack <+4 run 4 x [2 by 12]> unpack <+8 run 8> copy <+4 -> +8 run 4 x [2 by 12 -> 4]>
// R2C-NEXT: reshard_rt.piece dst 2 src 0 size [2, 2] at [0, 0] from [0, 4] pack <+8 run 4 x [2 by 12]> unpack <+0 run 8> copy <+8 -> +0 run 4 x [2 by 12 -> 4]>
// R2C-NEXT: reshard_rt.piece dst 2 src 1 size [2, 2] at [2, 0] from [0, 4] pack <+8 run 4 x [2 by 12]> unpack <+8 run 8> copy <+8 -> +8 run 4 x [2 by 12 -> 4]>
// R2C-NEXT: }
// R2C-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
// R2C-NEXT: reshard_rt.items 0 [g0.p0[0{{\]\]}}
// R2C-NEXT: reshard_rt.items 1 [g0.p2[0{{\]\]}}
// R2C-NEXT: reshard_rt.items 2 [g0.p4[0{{\]\]}}
// R2C-NEXT: reshard_rt.items 3 [g0.p1[0{{\]\]}}
// R2C-NEXT: reshard_rt.items 4 [g0.p3[0{{\]\]}}
// R2C-NEXT: reshard_rt.items 5 [g0.p5[0{{\]\]}}
// R2C-NEXT: reshard_rt.rank 0 workspace = 48 {
// R2C-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 8 bytes 8 items 0
// R2C-NEXT: reshard_rt.send to 3 phase 0 start 0 quota 8 bytes 8 items 1
// R2C-NEXT: reshard_rt.send to 4 phase 0 start 0 quota 8 bytes 8 items 2
// R2C-NEXT: }
// R2C-NEXT: reshard_rt.rank 1 workspace = 48 {
// R2C-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 8 bytes 8 items 3
// R2C-NEXT: reshard_rt.send to 3 phase 0 start 0 quota 8 bytes 8 items 4
// R2C-NEXT: reshard_rt.send to 4 phase 0 start 0 quota 8 bytes 8 items 5
// R2C-NEXT: }
// R2C-NEXT: reshard_rt.rank 2 workspace = 32 {
// R2C-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 8 bytes 8 items 0
// R2C-NEXT: reshard_rt.recv from 1 phase 0 start 0 quota 8 bytes 8 items 3
// R2C-NEXT: }
// R2C-NEXT: reshard_rt.rank 3 workspace = 32 {
// R2C-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 8 bytes 8 items 1
// R2C-NEXT: reshard_rt.recv from 1 phase 0 start 0 quota 8 bytes 8 items 4
// R2C-NEXT: }
// R2C-NEXT: reshard_rt.rank 4 workspace = 32 {
// R2C-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 8 bytes 8 items 2
// R2C-NEXT: reshard_rt.recv from 1 phase 0 start 0 quota 8 bytes 8 items 5
// R2C-NEXT: }
// R2C-NEXT: }

//--- contiguous.mlir
// [4, 6] f32 whole on rank 0 (96 B) to tp = 2 by rows on ranks 1, 2
// (shard [2, 6], 48 B). Combo i takes rows [2i, 2i + 2): on rank 0 dim 1 is
// whole (6 of 6), so the 2 rows join the run: 2 x 6 x 4 = 48 B at byte
// 48i, no loops, though the box is only half of rank 0's shard. The
// destination box is the whole shard. Rank 0: sends at 0 and 48 -> 96.
reshard.mesh @one shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @tp shape = [2] axes = ["tp"] ranks = [1, 2]
reshard.redistribute @w from @one <[[], []]> to @tp <[[tp], []]>
    : tensor<4x6xf32> -> tensor<4x6xf32>

// CONTIG:      reshard_rt.plan @contig num_ranks = 3 tensors = ["w"] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// CONTIG-NEXT: reshard_rt.mesh 0 ranks [0]
// CONTIG-NEXT: reshard_rt.mesh 1 ranks [1, 2]
// CONTIG-NEXT: reshard_rt.class 0 element_bytes 4 rank 2 src combos [0] shapes {{\[\[}}4, 6{{\]\]}} dst combos [0, 1] shapes {{\[\[}}2, 6], [2, 6{{\]\]}} {
// CONTIG-NEXT: reshard_rt.piece dst 0 src 0 size [2, 6] at [0, 0] from [0, 0] pack <+0 run 48> unpack <+0 run 48> copy <+0 -> +0 run 48>
// CONTIG-NEXT: reshard_rt.piece dst 1 src 0 size [2, 6] at [0, 0] from [2, 0] pack <+48 run 48> unpack <+0 run 48> copy <+48 -> +0 run 48>
// CONTIG-NEXT: }
// CONTIG-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
// CONTIG-NEXT: reshard_rt.items 0 [g0.p0[0{{\]\]}}
// CONTIG-NEXT: reshard_rt.items 1 [g0.p1[0{{\]\]}}
// CONTIG-NEXT: reshard_rt.rank 0 workspace = 96 {
// CONTIG-NEXT: reshard_rt.send to 1 phase 0 start 0 quota 48 bytes 48 items 0
// CONTIG-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 48 bytes 48 items 1
// CONTIG-NEXT: }
// CONTIG-NEXT: reshard_rt.rank 1 workspace = 48 {
// CONTIG-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 48 bytes 48 items 0
// CONTIG-NEXT: }
// CONTIG-NEXT: reshard_rt.rank 2 workspace = 48 {
// CONTIG-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 48 bytes 48 items 1
// CONTIG-NEXT: }
// CONTIG-NEXT: }

//--- three-d.mlir
// Two 3-D f32 tensors from rank 0 (whole) to tp = 2 on ranks 1, 2 (two
// classes); the plan takes the module's name.
// @w [2, 4, 3] (strides [48, 12, 4], 96 B) split on dim 1: combo i gets
//   [0:2, 2i:2i+2, 0:3]. On rank 0 dim 2 is whole, so dim 1 joins the run
//   (2 x 3 x 4 = 24 B) and stops there (2 of 4); dim 0 is a loop of 2,
//   stride 48: <+24i run 24 x [2 by 48]>. On the destination (shard
//   [2, 2, 3], 48 B) all dims are whole: <+0 run 48>.
// @v [2, 2, 4] (strides [32, 16, 4], 64 B) split on dim 2: combo i gets
//   [0:2, 0:2, 2i:2i+2]. On rank 0 the run is 2 x 4 = 8 B (dim 2 not
//   whole); loops (2, 32) and (2, 16), and 32 = 2 x 16, so they merge into
//   one loop (4, 16): <+8i run 8 x [4 by 16]>. Destination shard
//   [2, 2, 2] is whole: <+0 run 32>.
// One stream per receiver, @w then @v: 48 + 32 = 80 B; rank 0's sends at
// 0 and 80 (a multiple of 16) -> 160.
module @three_d {
  reshard.mesh @one shape = [1] axes = ["x"] ranks = [0]
  reshard.mesh @tp shape = [2] axes = ["tp"] ranks = [1, 2]
  reshard.redistribute @w from @one <[[], [], []]> to @tp <[[], [tp], []]>
      : tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  reshard.redistribute @v from @one <[[], [], []]> to @tp <[[], [], [tp]]>
      : tensor<2x2x4xf32> -> tensor<2x2x4xf32>
}

// THREE-D:      module @three_d {
// THREE-D-NEXT:   reshard_rt.plan @three_d num_ranks = 3 tensors = ["w", "v"] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// THREE-D-NEXT: reshard_rt.mesh 0 ranks [0]
// THREE-D-NEXT: reshard_rt.mesh 1 ranks [1, 2]
// THREE-D-NEXT: reshard_rt.class 0 element_bytes 4 rank 3 src combos [0] shapes {{\[\[}}2, 4, 3{{\]\]}} dst combos [0, 1] shapes {{\[\[}}2, 2, 3], [2, 2, 3{{\]\]}} {
// THREE-D-NEXT: reshard_rt.piece dst 0 src 0 size [2, 2, 3] at [0, 0, 0] from [0, 0, 0] pack <+0 run 24 x [2 by 48]> unpack <+0 run 48> copy <+0 -> +0 run 24 x [2 by 48 -> 24]>
// THREE-D-NEXT: reshard_rt.piece dst 1 src 0 size [2, 2, 3] at [0, 0, 0] from [0, 2, 0] pack <+24 run 24 x [2 by 48]> unpack <+0 run 48> copy <+24 -> +0 run 24 x [2 by 48 -> 24]>
// THREE-D-NEXT: }
// THREE-D-NEXT: reshard_rt.class 1 element_bytes 4 rank 3 src combos [0] shapes {{\[\[}}2, 2, 4{{\]\]}} dst combos [0, 1] shapes {{\[\[}}2, 2, 2], [2, 2, 2{{\]\]}} {
// THREE-D-NEXT: reshard_rt.piece dst 0 src 0 size [2, 2, 2] at [0, 0, 0] from [0, 0, 0] pack <+0 run 8 x [4 by 16]> unpack <+0 run 32> copy <+0 -> +0 run 8 x [4 by 16 -> 8]>
// THREE-D-NEXT: reshard_rt.piece dst 1 src 0 size [2, 2, 2] at [0, 0, 0] from [0, 0, 2] pack <+8 run 8 x [4 by 16]> unpack <+0 run 32> copy <+8 -> +0 run 8 x [4 by 16 -> 8]>
// THREE-D-NEXT: }
// THREE-D-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
// THREE-D-NEXT: reshard_rt.group 1 class 1 from 0 to 1 tensors [1]
// THREE-D-NEXT: reshard_rt.items 0 [g0.p0[0], g1.p0[0{{\]\]}}
// THREE-D-NEXT: reshard_rt.items 1 [g0.p1[0], g1.p1[0{{\]\]}}
// THREE-D-NEXT: reshard_rt.rank 0 workspace = 160 {
// THREE-D-NEXT: reshard_rt.send to 1 phase 0 start 0 quota 80 bytes 80 items 0
// THREE-D-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 80 bytes 80 items 1
// THREE-D-NEXT: }
// THREE-D-NEXT: reshard_rt.rank 1 workspace = 80 {
// THREE-D-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 80 bytes 80 items 0
// THREE-D-NEXT: }
// THREE-D-NEXT: reshard_rt.rank 2 workspace = 80 {
// THREE-D-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 80 bytes 80 items 1
// THREE-D-NEXT: }
// THREE-D-NEXT: }
// THREE-D-NEXT: }

//--- count-one.mlir
// [2, 2, 4] f32 whole on rank 0 (strides [32, 16, 4], 64 B) to a 2 x 2
// mesh (ranks 1 + 2a + b), dim 0 over a and dim 2 over b: combo 2a + b
// gets [a:a+1, 0:2, 2b:2b+2] (shard [1, 2, 2], 16 B, whole on arrival). On
// rank 0 the run is 2 x 4 = 8 B (dim 2: 2 of 4); dim 0 is a loop of count
// 1, dropped, leaving one loop (2, 16) over dim 1, from byte 32a + 8b:
// <+(32a + 8b) run 8 x [2 by 16]>. Four 16 B sends at 0, 16, 32, 48 -> 64.
reshard.mesh @one shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @g shape = [2, 2] axes = ["a", "b"] ranks = [1, 2, 3, 4]
reshard.redistribute @x from @one <[[], [], []]> to @g <[[a], [], [b]]>
    : tensor<2x2x4xf32> -> tensor<2x2x4xf32>

// COUNT-ONE:      reshard_rt.plan @reshard_plan num_ranks = 5 tensors = ["x"] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// COUNT-ONE-NEXT: reshard_rt.mesh 0 ranks [0]
// COUNT-ONE-NEXT: reshard_rt.mesh 1 ranks [1, 2, 3, 4]
// COUNT-ONE-NEXT: reshard_rt.class 0 element_bytes 4 rank 3 src combos [0] shapes {{\[\[}}2, 2, 4{{\]\]}} dst combos [0, 1, 2, 3] shapes {{\[\[}}1, 2, 2], [1, 2, 2], [1, 2, 2], [1, 2, 2{{\]\]}} {
// COUNT-ONE-NEXT: reshard_rt.piece dst 0 src 0 size [1, 2, 2] at [0, 0, 0] from [0, 0, 0] pack <+0 run 8 x [2 by 16]> unpack <+0 run 16> copy <+0 -> +0 run 8 x [2 by 16 -> 8]>
// COUNT-ONE-NEXT: reshard_rt.piece dst 1 src 0 size [1, 2, 2] at [0, 0, 0] from [0, 0, 2] pack <+8 run 8 x [2 by 16]> unpack <+0 run 16> copy <+8 -> +0 run 8 x [2 by 16 -> 8]>
// COUNT-ONE-NEXT: reshard_rt.piece dst 2 src 0 size [1, 2, 2] at [0, 0, 0] from [1, 0, 0] pack <+32 run 8 x [2 by 16]> unpack <+0 run 16> copy <+32 -> +0 run 8 x [2 by 16 -> 8]>
// COUNT-ONE-NEXT: reshard_rt.piece dst 3 src 0 size [1, 2, 2] at [0, 0, 0] from [1, 0, 2] pack <+40 run 8 x [2 by 16]> unpack <+0 run 16> copy <+40 -> +0 run 8 x [2 by 16 -> 8]>
// COUNT-ONE-NEXT: }
// COUNT-ONE-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
// COUNT-ONE-NEXT: reshard_rt.items 0 [g0.p0[0{{\]\]}}
// COUNT-ONE-NEXT: reshard_rt.items 1 [g0.p1[0{{\]\]}}
// COUNT-ONE-NEXT: reshard_rt.items 2 [g0.p2[0{{\]\]}}
// COUNT-ONE-NEXT: reshard_rt.items 3 [g0.p3[0{{\]\]}}
// COUNT-ONE-NEXT: reshard_rt.rank 0 workspace = 64 {
// COUNT-ONE-NEXT: reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
// COUNT-ONE-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 16 bytes 16 items 1
// COUNT-ONE-NEXT: reshard_rt.send to 3 phase 0 start 0 quota 16 bytes 16 items 2
// COUNT-ONE-NEXT: reshard_rt.send to 4 phase 0 start 0 quota 16 bytes 16 items 3
// COUNT-ONE-NEXT: }
// COUNT-ONE-NEXT: reshard_rt.rank 1 workspace = 16 {
// COUNT-ONE-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
// COUNT-ONE-NEXT: }
// COUNT-ONE-NEXT: reshard_rt.rank 2 workspace = 16 {
// COUNT-ONE-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 1
// COUNT-ONE-NEXT: }
// COUNT-ONE-NEXT: reshard_rt.rank 3 workspace = 16 {
// COUNT-ONE-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 2
// COUNT-ONE-NEXT: }
// COUNT-ONE-NEXT: reshard_rt.rank 4 workspace = 16 {
// COUNT-ONE-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 3
// COUNT-ONE-NEXT: }
// COUNT-ONE-NEXT: }

//--- local-copy.mlir
// [4, 4] f32 by columns over tp = 2 on ranks 0, 1 (shard [4, 2], strides
// [8, 4], 32 B) to replicated on the same ranks ([4, 4], strides [16, 4],
// 64 B): an all-gather. Piece c (source combo c) lands at column 2c: whole
// in the source (2 of 2), so it packs as one 32-byte run, but not in the
// destination (2 of 4): unpack <+8c run 8 x [4 by 16]>, and copy with the
// loop at source stride 8 and destination stride 16. Rank c keeps piece c
// by a local copy and gets the other from its peer; the copy list and the
// peer's stream name the same one-item list. Each rank sends 32 B at 0 and
// receives 32 B at 32 -> workspace 64.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[], [tp]]> to @m <[[], []]>
    : tensor<4x4xf32> -> tensor<4x4xf32>

// COPY:      reshard_rt.plan @reshard_plan num_ranks = 2 tensors = ["w"] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// COPY-NEXT: reshard_rt.mesh 0 ranks [0, 1]
// COPY-NEXT: reshard_rt.class 0 element_bytes 4 rank 2 src combos [0, 1] shapes {{\[\[}}4, 2], [4, 2{{\]\]}} dst combos [0, 0] shapes {{\[\[}}4, 4{{\]\]}} {
// COPY-NEXT: reshard_rt.piece dst 0 src 0 size [4, 2] at [0, 0] from [0, 0] pack <+0 run 32> unpack <+0 run 8 x [4 by 16]> copy <+0 -> +0 run 8 x [4 by 8 -> 16]>
// COPY-NEXT: reshard_rt.piece dst 0 src 1 size [4, 2] at [0, 2] from [0, 0] pack <+0 run 32> unpack <+8 run 8 x [4 by 16]> copy <+0 -> +8 run 8 x [4 by 8 -> 16]>
// COPY-NEXT: }
// COPY-NEXT: reshard_rt.group 0 class 0 from 0 to 0 tensors [0]
// COPY-NEXT: reshard_rt.items 0 [g0.p0[0{{\]\]}}
// COPY-NEXT: reshard_rt.items 1 [g0.p1[0{{\]\]}}
// COPY-NEXT: reshard_rt.rank 0 workspace = 64 {
// COPY-NEXT: reshard_rt.copy items 0
// COPY-NEXT: reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
// COPY-NEXT: reshard_rt.recv from 1 phase 0 start 0 quota 32 bytes 32 items 1
// COPY-NEXT: }
// COPY-NEXT: reshard_rt.rank 1 workspace = 64 {
// COPY-NEXT: reshard_rt.copy items 1
// COPY-NEXT: reshard_rt.send to 0 phase 0 start 0 quota 32 bytes 32 items 1
// COPY-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
// COPY-NEXT: }
// COPY-NEXT: }

//--- group.mlir
// Two tensors of one class between the same meshes are one group of two
// members: 4 x f32 from rank 0 to tp = 2 on ranks 1, 2. Each stream is one
// item, its piece for members 0 and 1 ([0 x 2]): 2 x 8 B. The receiver
// unpacks member 0's box, then member 1's, in that order.
reshard.mesh @one shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @tp shape = [2] axes = ["tp"] ranks = [1, 2]
reshard.redistribute @e0 from @one <[[]]> to @tp <[[tp]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.redistribute @e1 from @one <[[]]> to @tp <[[tp]]>
    : tensor<4xf32> -> tensor<4xf32>

// GROUP:      reshard_rt.plan @reshard_plan num_ranks = 3 tensors = ["e0", "e1"] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// GROUP-NEXT: reshard_rt.mesh 0 ranks [0]
// GROUP-NEXT: reshard_rt.mesh 1 ranks [1, 2]
// GROUP-NEXT: reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes {{\[\[}}4{{\]\]}} dst combos [0, 1] shapes {{\[\[}}2], [2{{\]\]}} {
// GROUP-NEXT: reshard_rt.piece dst 0 src 0 size [2] at [0] from [0] pack <+0 run 8> unpack <+0 run 8> copy <+0 -> +0 run 8>
// GROUP-NEXT: reshard_rt.piece dst 1 src 0 size [2] at [0] from [2] pack <+8 run 8> unpack <+0 run 8> copy <+8 -> +0 run 8>
// GROUP-NEXT: }
// GROUP-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
// GROUP-NEXT: reshard_rt.items 0 [g0.p0[0 x 2{{\]\]}}
// GROUP-NEXT: reshard_rt.items 1 [g0.p1[0 x 2{{\]\]}}
// GROUP-NEXT: reshard_rt.rank 0 workspace = 32 {
// GROUP-NEXT: reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
// GROUP-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 16 bytes 16 items 1
// GROUP-NEXT: }
// GROUP-NEXT: reshard_rt.rank 1 workspace = 16 {
// GROUP-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
// GROUP-NEXT: }
// GROUP-NEXT: reshard_rt.rank 2 workspace = 16 {
// GROUP-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 1
// GROUP-NEXT: }
// GROUP-NEXT: }

//--- rotation.mlir
// Balanced routing of a group rotates its members over the holders: four
// 4 x f32 experts replicated over dp = 2 on ranks 0, 1 go to rank 2, all in
// one NVLink domain. Both ranks hold every piece; with no route rows (the
// bases are 0), member k takes holder k mod 2: rank 0 sends members 0 and
// 2 ([0 by 2 x 2]), rank 1 members 1 and 3 ([1 by 2 x 2]), 32 B each, and
// rank 2 receives both streams in step 0 (at 0 and 32 -> 64).
reshard.topology @node gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @dp shape = [2] axes = ["dp"] ranks = [0, 1]
reshard.mesh @two shape = [1] axes = ["x"] ranks = [2]
reshard.redistribute @e0 from @dp <[[]]> to @two <[[]]> topology @node
    : tensor<4xf32> -> tensor<4xf32>
reshard.redistribute @e1 from @dp <[[]]> to @two <[[]]> topology @node
    : tensor<4xf32> -> tensor<4xf32>
reshard.redistribute @e2 from @dp <[[]]> to @two <[[]]> topology @node
    : tensor<4xf32> -> tensor<4xf32>
reshard.redistribute @e3 from @dp <[[]]> to @two <[[]]> topology @node
    : tensor<4xf32> -> tensor<4xf32>

// ROTATION:      reshard_rt.plan @reshard_plan num_ranks = 3 tensors = ["e0", "e1", "e2", "e3"] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// ROTATION-NEXT: reshard_rt.mesh 0 ranks [0, 1]
// ROTATION-NEXT: reshard_rt.mesh 1 ranks [2]
// ROTATION-NEXT: reshard_rt.class 0 element_bytes 4 rank 1 src combos [0, 0] shapes {{\[\[}}4{{\]\]}} dst combos [0] shapes {{\[\[}}4{{\]\]}} {
// ROTATION-NEXT: reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
// ROTATION-NEXT: }
// ROTATION-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1, 2, 3]
// ROTATION-NEXT: reshard_rt.items 0 [g0.p0[0 by 2 x 2{{\]\]}}
// ROTATION-NEXT: reshard_rt.items 1 [g0.p0[1 by 2 x 2{{\]\]}}
// ROTATION-NEXT: reshard_rt.rank 0 workspace = 32 {
// ROTATION-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 32 bytes 32 items 0
// ROTATION-NEXT: }
// ROTATION-NEXT: reshard_rt.rank 1 workspace = 32 {
// ROTATION-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 32 bytes 32 items 1
// ROTATION-NEXT: }
// ROTATION-NEXT: reshard_rt.rank 2 workspace = 64 {
// ROTATION-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
// ROTATION-NEXT: reshard_rt.recv from 1 phase 0 start 0 quota 32 bytes 32 items 1
// ROTATION-NEXT: }
// ROTATION-NEXT: }

//--- relay.mlir
// [2, 4] f32 whole on rank 0 (domain 0; strides [16, 4], 32 B) to columns
// over tp, replicated over dp, on ranks 4-7 (domain 1; shard [2, 2], 16 B):
// tp 0 on 4, 5 and tp 1 on 6, 7. Each half crosses the network once, into
// 4 and 6 (equal NIC load, lowest rank), which forward it to 5 and 7 over
// NVLink in phase 1; unscheduled, phase 0 runs in step 0 and phase 1 in
// step 1.
//   rank 0 packs [0:2, 2c:2c+2]: <+8c run 8 x [2 by 16]>.
//   a relay packs the same box from its destination shard, where it
//     unpacked it (the piece's unpack box, <+0 run 16>), not the strided
//     source box: its stream names the same item list as its receive.
// Ranks 1-3 are in no mesh and get no program.
reshard.topology @t gpus_per_node = 4 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @src shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @dst shape = [2, 2] axes = ["tp", "dp"] ranks = [4, 5, 6, 7]
reshard.redistribute @w from @src <[[], []]> to @dst <[[], [tp]]> topology @t
    : tensor<2x4xf32> -> tensor<2x4xf32>

// RELAY:      reshard_rt.plan @reshard_plan num_ranks = 8 tensors = ["w"] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// RELAY-NEXT: reshard_rt.mesh 0 ranks [0]
// RELAY-NEXT: reshard_rt.mesh 1 ranks [4, 5, 6, 7]
// RELAY-NEXT: reshard_rt.class 0 element_bytes 4 rank 2 src combos [0] shapes {{\[\[}}2, 4{{\]\]}} dst combos [0, 0, 1, 1] shapes {{\[\[}}2, 2], [2, 2{{\]\]}} {
// RELAY-NEXT: reshard_rt.piece dst 0 src 0 size [2, 2] at [0, 0] from [0, 0] pack <+0 run 8 x [2 by 16]> unpack <+0 run 16> copy <+0 -> +0 run 8 x [2 by 16 -> 8]>
// RELAY-NEXT: reshard_rt.piece dst 1 src 0 size [2, 2] at [0, 0] from [0, 2] pack <+8 run 8 x [2 by 16]> unpack <+0 run 16> copy <+8 -> +0 run 8 x [2 by 16 -> 8]>
// RELAY-NEXT: }
// RELAY-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
// RELAY-NEXT: reshard_rt.items 0 [g0.p0[0{{\]\]}}
// RELAY-NEXT: reshard_rt.items 1 [g0.p1[0{{\]\]}}
// RELAY-NEXT: reshard_rt.rank 0 workspace = 32 {
// RELAY-NEXT: reshard_rt.send to 4 phase 0 start 0 quota 16 bytes 16 items 0
// RELAY-NEXT: reshard_rt.send to 6 phase 0 start 0 quota 16 bytes 16 items 1
// RELAY-NEXT: }
// RELAY-NEXT: reshard_rt.rank 4 workspace = 16 {
// RELAY-NEXT: reshard_rt.send to 5 phase 1 start 1 quota 16 bytes 16 items 0
// RELAY-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
// RELAY-NEXT: }
// RELAY-NEXT: reshard_rt.rank 5 workspace = 16 {
// RELAY-NEXT: reshard_rt.recv from 4 phase 1 start 1 quota 16 bytes 16 items 0
// RELAY-NEXT: }
// RELAY-NEXT: reshard_rt.rank 6 workspace = 16 {
// RELAY-NEXT: reshard_rt.send to 7 phase 1 start 1 quota 16 bytes 16 items 1
// RELAY-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 1
// RELAY-NEXT: }
// RELAY-NEXT: reshard_rt.rank 7 workspace = 16 {
// RELAY-NEXT: reshard_rt.recv from 6 phase 1 start 1 quota 16 bytes 16 items 1
// RELAY-NEXT: }
// RELAY-NEXT: }

//--- split.mlir
// The full pipeline with a tight budget: 32 x f32 = 128 B from rank 0 to
// rank 1, budget 50: one stream in N = 3 steps of quota ceil(128 / 3) =
// 43, so 43, 43 and 42 B (the engine cuts the box where the quota falls,
// mid-element too: bytes are bytes). Workspace = the largest step: 43
// rounded up to 16 = 48.
reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[]]> to @b <[[]]>
    : tensor<32xf32> -> tensor<32xf32>

// SPLIT:      reshard_rt.plan @reshard_plan num_ranks = 2 tensors = ["w"] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} staging_budget = 50 max_ops_per_step = 1024 {
// SPLIT-NEXT: reshard_rt.mesh 0 ranks [0]
// SPLIT-NEXT: reshard_rt.mesh 1 ranks [1]
// SPLIT-NEXT: reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes {{\[\[}}32{{\]\]}} dst combos [0] shapes {{\[\[}}32{{\]\]}} {
// SPLIT-NEXT: reshard_rt.piece dst 0 src 0 size [32] at [0] from [0] pack <+0 run 128> unpack <+0 run 128> copy <+0 -> +0 run 128>
// SPLIT-NEXT: }
// SPLIT-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
// SPLIT-NEXT: reshard_rt.items 0 [g0.p0[0{{\]\]}}
// SPLIT-NEXT: reshard_rt.rank 0 workspace = 48 {
// SPLIT-NEXT: reshard_rt.send to 1 phase 0 start 0 quota 43 bytes 128 items 0
// SPLIT-NEXT: }
// SPLIT-NEXT: reshard_rt.rank 1 workspace = 48 {
// SPLIT-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 43 bytes 128 items 0
// SPLIT-NEXT: }
// SPLIT-NEXT: }

//--- scalar.mlir
// A 0-D f64 (8 B) replicated on ranks 0, 1 to replicated on ranks 1, 2:
// no dims, so every box is one 8-byte run. Rank 1 holds it and copies it
// locally; rank 0, the lowest holder, sends it to rank 2 (8 B at 0 ->
// workspace 16). Rank 1 has no message: workspace 0.
reshard.mesh @a shape = [2] axes = ["x"] ranks = [0, 1]
reshard.mesh @b shape = [2] axes = ["y"] ranks = [1, 2]
reshard.redistribute @s from @a <[]> to @b <[]>
    : tensor<f64> -> tensor<f64>

// SCALAR:      reshard_rt.plan @reshard_plan num_ranks = 3 tensors = ["s"] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// SCALAR-NEXT: reshard_rt.mesh 0 ranks [0, 1]
// SCALAR-NEXT: reshard_rt.mesh 1 ranks [1, 2]
// SCALAR-NEXT: reshard_rt.class 0 element_bytes 8 rank 0 src combos [0, 0] shapes {{\[\[}}{{\]\]}} dst combos [0, 0] shapes {{\[\[}}{{\]\]}} {
// SCALAR-NEXT: reshard_rt.piece dst 0 src 0 size [] at [] from [] pack <+0 run 8> unpack <+0 run 8> copy <+0 -> +0 run 8>
// SCALAR-NEXT: }
// SCALAR-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
// SCALAR-NEXT: reshard_rt.items 0 [g0.p0[0{{\]\]}}
// SCALAR-NEXT: reshard_rt.rank 0 workspace = 16 {
// SCALAR-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 8 bytes 8 items 0
// SCALAR-NEXT: }
// SCALAR-NEXT: reshard_rt.rank 1 workspace = 0 {
// SCALAR-NEXT: reshard_rt.copy items 0
// SCALAR-NEXT: }
// SCALAR-NEXT: reshard_rt.rank 2 workspace = 16 {
// SCALAR-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 8 bytes 8 items 0
// SCALAR-NEXT: }
// SCALAR-NEXT: }

//--- not-in-mesh.mlir
// Ranks outside a side's mesh. @u: 1 x f32 over tp = 2 on ranks 0, 2
// (chunks of ceil(1/2) = 1: combo 0 holds it, combo 1 an empty shard, of
// shape [0]) to rank 3. @v: 3 x i8 from rank 3 to rank 0. Rank 2 has
// nothing to do and no program; rank 1 is in no mesh, but still counts in
// num_ranks = 4. Ranks 0 and 3 each send then receive: staging at 0 and 16,
// workspace 32.
reshard.mesh @a shape = [2] axes = ["tp"] ranks = [0, 2]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [3]
reshard.mesh @c shape = [1] axes = ["x"] ranks = [0]
reshard.redistribute @u from @a <[[tp]]> to @b <[[]]>
    : tensor<1xf32> -> tensor<1xf32>
reshard.redistribute @v from @b <[[]]> to @c <[[]]>
    : tensor<3xi8> -> tensor<3xi8>

// NO-MESH:      reshard_rt.plan @reshard_plan num_ranks = 4 tensors = ["u", "v"] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// NO-MESH-NEXT: reshard_rt.mesh 0 ranks [0, 2]
// NO-MESH-NEXT: reshard_rt.mesh 1 ranks [3]
// NO-MESH-NEXT: reshard_rt.mesh 2 ranks [0]
// NO-MESH-NEXT: reshard_rt.class 0 element_bytes 4 rank 1 src combos [0, 1] shapes {{\[\[}}1], [0{{\]\]}} dst combos [0] shapes {{\[\[}}1{{\]\]}} {
// NO-MESH-NEXT: reshard_rt.piece dst 0 src 0 size [1] at [0] from [0] pack <+0 run 4> unpack <+0 run 4> copy <+0 -> +0 run 4>
// NO-MESH-NEXT: }
// NO-MESH-NEXT: reshard_rt.class 1 element_bytes 1 rank 1 src combos [0] shapes {{\[\[}}3{{\]\]}} dst combos [0] shapes {{\[\[}}3{{\]\]}} {
// NO-MESH-NEXT: reshard_rt.piece dst 0 src 0 size [3] at [0] from [0] pack <+0 run 3> unpack <+0 run 3> copy <+0 -> +0 run 3>
// NO-MESH-NEXT: }
// NO-MESH-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
// NO-MESH-NEXT: reshard_rt.group 1 class 1 from 1 to 2 tensors [1]
// NO-MESH-NEXT: reshard_rt.items 0 [g0.p0[0{{\]\]}}
// NO-MESH-NEXT: reshard_rt.items 1 [g1.p0[0{{\]\]}}
// NO-MESH-NEXT: reshard_rt.rank 0 workspace = 32 {
// NO-MESH-NEXT: reshard_rt.send to 3 phase 0 start 0 quota 4 bytes 4 items 0
// NO-MESH-NEXT: reshard_rt.recv from 3 phase 0 start 0 quota 3 bytes 3 items 1
// NO-MESH-NEXT: }
// NO-MESH-NEXT: reshard_rt.rank 3 workspace = 32 {
// NO-MESH-NEXT: reshard_rt.send to 0 phase 0 start 0 quota 3 bytes 3 items 1
// NO-MESH-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 4 bytes 4 items 0
// NO-MESH-NEXT: }
// NO-MESH-NEXT: }

//--- empty.mlir
// No redistributions: still a valid plan, over a communicator of one rank,
// with no tensors and no programs.


// EMPTY:      reshard_rt.plan @reshard_plan num_ranks = 1 tensors = [] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// EMPTY-NEXT: }

//--- mesh-only.mlir
// A mesh that no redistribution uses adds no ranks, and goes with the
// layout.
module @idle {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
}

// MESH-ONLY:      module @idle {
// MESH-ONLY-NEXT:   reshard_rt.plan @idle num_ranks = 1 tensors = [] dtypes = [{{.*}}] fingerprint = {{-?[0-9]+}} {
// MESH-ONLY-NEXT: }
// MESH-ONLY-NEXT: }

//--- signedness.mlir
// Signed integers move as their width (the verifier takes every 8/16/32/
// 64-bit integer): si32 is int32, ui16 uint16, si8 int8.
reshard.mesh @a shape = [2] axes = ["x"] ranks = [0, 1]
reshard.redistribute @s32 from @a <[[x]]> to @a <[[]]>
    : tensor<4xsi32> -> tensor<4xsi32>
reshard.redistribute @u16 from @a <[[x]]> to @a <[[]]>
    : tensor<4xui16> -> tensor<4xui16>
reshard.redistribute @s8 from @a <[[x]]> to @a <[[]]>
    : tensor<4xsi8> -> tensor<4xsi8>

// SIGNEDNESS: tensors = ["s32", "u16", "s8"] dtypes = ["int32", "uint16", "int8"]
