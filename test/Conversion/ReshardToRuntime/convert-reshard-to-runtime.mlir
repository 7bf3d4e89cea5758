// convert-reshard-to-runtime: planned pieces to per-rank reshard_rt
// programs. Each case is a module of its own (split-file); every expected
// descriptor is worked out by hand in the case's comment, from the formats
// in RuntimeOps.td and the rules in Passes.td:
//   box  [tensor, buffer, offset, run, n, (count, stride) x n]
//   copy [tensor, src_offset, dst_offset, run, n, (count, src, dst) x n]
// Offsets and strides are in bytes of the dense row-major local shards. The
// run takes the innermost dim and keeps taking the next outer one while the
// previous dim was taken whole (in every buffer, for a copy); the remaining
// outer dims are loops, outermost first, count-1 loops dropped, and a loop
// whose stride is the next loop's span merges into it. A message is one per
// (step, sender, receiver), boxes in canonical order (tensor, then piece).
// Staging: sends first, then receives, each at a 16-byte-aligned offset;
// workspace = the largest step. shards are (tensor, src bytes, dst bytes),
// -1 for a rank outside that side's mesh, 0 for an empty shard, tensors
// with neither left out. A relay forward packs from the relay's
// destination shard (buffer 1). Hand-written piece tables
// are checked by reshard-run first (EXEC), so the plan they describe is a
// correct one; every output is parsed and verified again by reshard-opt.

// RUN: rm -rf %t && split-file %s %t

// RUN: reshard-opt %t/rows-to-cols.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=R2C
// RUN: reshard-opt %t/contiguous.mlir --reshard-intersect --convert-reshard-to-runtime=plan-name=contig | reshard-opt | FileCheck %s --check-prefix=CONTIG
// RUN: reshard-opt %t/three-d.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=THREE-D
// RUN: reshard-opt %t/three-d.mlir --reshard-intersect --convert-reshard-to-runtime=plan-name=_renamed2 | FileCheck %s --check-prefix=RENAMED
// RUN: reshard-opt %t/count-one.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=COUNT-ONE
// RUN: reshard-opt %t/local-copy.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=COPY
// RUN: reshard-run %t/relay.mlir --check | FileCheck %s --check-prefix=EXEC-RELAY
// RUN: reshard-opt %t/relay.mlir --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=RELAY
// RUN: reshard-run %t/steps.mlir --check | FileCheck %s --check-prefix=EXEC-STEPS
// RUN: reshard-opt %t/steps.mlir --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=STEPS
// RUN: reshard-opt %t/split.mlir --reshard-intersect --reshard-select-sources --reshard-schedule=staging-budget=127 --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=SPLIT
// RUN: reshard-run %t/scalar.mlir --check | FileCheck %s --check-prefix=EXEC-SCALAR
// RUN: reshard-opt %t/scalar.mlir --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=SCALAR
// RUN: reshard-opt %t/not-in-mesh.mlir --reshard-intersect --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=NO-MESH
// RUN: reshard-opt %t/empty.mlir --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=EMPTY
// RUN: reshard-opt %t/mesh-only.mlir --convert-reshard-to-runtime | reshard-opt | FileCheck %s --check-prefix=MESH-ONLY

//--- rows-to-cols.mlir
// [4, 6] bf16 (2 B). Source tp = 2 on ranks 0, 1 by rows: local [2, 6],
// byte strides [12, 2], 24 B. Destination tp = 3 on ranks 2, 3, 4 by
// columns: local [4, 2], strides [4, 2], 16 B. Destination rank 2 + c gets
// cols [2c, 2c + 2) of rows [0, 2) from rank 0 and of rows [2, 4) from
// rank 1, each a [2, 2] box.
//   pack on the source, at local [0, 2c]: dim 1 is 2 of 6 (not whole), so
//     run = 2 x 2 = 4 B and stop; dim 0 is a loop of 2 rows, stride 12:
//     [0, 0, 4c, 4, 1, 2, 12].
//   unpack on the destination, at [0, 0] or [2, 0]: dim 1 is whole (2 of
//     2), so dim 0 joins the run: 2 x 2 x 2 = 8 B, no loops:
//     [0, 1, 0, 8, 0] and [0, 1, 8, 8, 0].
// One 8 B message per pair. Senders: 3 sends at 0, 16, 32 -> workspace 48.
// Receivers: 2 receives at 0, 16 -> 32. Ranks of one side only: -1 on the
// other.
reshard.mesh @rows shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @cols shape = [3] axes = ["tp"] ranks = [2, 3, 4]
reshard.redistribute @w from @rows <[[tp], []]> to @cols <[[], [tp]]>
    : tensor<4x6xbf16> -> tensor<4x6xbf16>

// R2C-NOT:    {{reshard\.}}
// R2C:        reshard_rt.plan @reshard_plan num_ranks = 5 tensors = ["w"] fingerprint = {{-?[0-9]+}} {
// R2C-NEXT:     reshard_rt.rank 0 workspace = 48 shards = [0, 24, -1] {
// R2C-NEXT:       reshard_rt.step 0 {
// R2C-NEXT:         reshard_rt.send to 2 bytes 8 staging 0 pack = [0, 0, 0, 4, 1, 2, 12]{{$}}
// R2C-NEXT:         reshard_rt.send to 3 bytes 8 staging 16 pack = [0, 0, 4, 4, 1, 2, 12]{{$}}
// R2C-NEXT:         reshard_rt.send to 4 bytes 8 staging 32 pack = [0, 0, 8, 4, 1, 2, 12]{{$}}
// R2C-NEXT:       }
// R2C-NEXT:     }
// R2C-NEXT:     reshard_rt.rank 1 workspace = 48 shards = [0, 24, -1] {
// R2C-NEXT:       reshard_rt.step 0 {
// R2C-NEXT:         reshard_rt.send to 2 bytes 8 staging 0 pack = [0, 0, 0, 4, 1, 2, 12]{{$}}
// R2C-NEXT:         reshard_rt.send to 3 bytes 8 staging 16 pack = [0, 0, 4, 4, 1, 2, 12]{{$}}
// R2C-NEXT:         reshard_rt.send to 4 bytes 8 staging 32 pack = [0, 0, 8, 4, 1, 2, 12]{{$}}
// R2C-NEXT:       }
// R2C-NEXT:     }
// R2C-NEXT:     reshard_rt.rank 2 workspace = 32 shards = [0, -1, 16] {
// R2C-NEXT:       reshard_rt.step 0 {
// R2C-NEXT:         reshard_rt.recv from 0 bytes 8 staging 0 unpack = [0, 1, 0, 8, 0]{{$}}
// R2C-NEXT:         reshard_rt.recv from 1 bytes 8 staging 16 unpack = [0, 1, 8, 8, 0]{{$}}
// R2C-NEXT:       }
// R2C-NEXT:     }
// R2C-NEXT:     reshard_rt.rank 3 workspace = 32 shards = [0, -1, 16] {
// R2C-NEXT:       reshard_rt.step 0 {
// R2C-NEXT:         reshard_rt.recv from 0 bytes 8 staging 0 unpack = [0, 1, 0, 8, 0]{{$}}
// R2C-NEXT:         reshard_rt.recv from 1 bytes 8 staging 16 unpack = [0, 1, 8, 8, 0]{{$}}
// R2C-NEXT:       }
// R2C-NEXT:     }
// R2C-NEXT:     reshard_rt.rank 4 workspace = 32 shards = [0, -1, 16] {
// R2C-NEXT:       reshard_rt.step 0 {
// R2C-NEXT:         reshard_rt.recv from 0 bytes 8 staging 0 unpack = [0, 1, 0, 8, 0]{{$}}
// R2C-NEXT:         reshard_rt.recv from 1 bytes 8 staging 16 unpack = [0, 1, 8, 8, 0]{{$}}
// R2C-NEXT:       }
// R2C-NEXT:     }
// R2C-NEXT:   }
// R2C-NOT:    {{reshard\.}}

//--- contiguous.mlir
// [4, 6] f32 whole on rank 0 (96 B) to tp = 2 by rows on ranks 1, 2
// (local [2, 6], 48 B). Rank 1 + i takes rows [2i, 2i + 2): on rank 0 dim
// 1 is whole (6 of 6), so the 2 rows join the run: 2 x 6 x 4 = 48 B at
// byte 48i, no loops, though the box is only half of rank 0's shard. The
// destination box is the whole shard. Rank 0: sends at 0 and 48 -> 96.
reshard.mesh @one shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @tp shape = [2] axes = ["tp"] ranks = [1, 2]
reshard.redistribute @w from @one <[[], []]> to @tp <[[tp], []]>
    : tensor<4x6xf32> -> tensor<4x6xf32>

// CONTIG:      reshard_rt.plan @contig num_ranks = 3 tensors = ["w"]
// CONTIG-NEXT:   reshard_rt.rank 0 workspace = 96 shards = [0, 96, -1] {
// CONTIG-NEXT:     reshard_rt.step 0 {
// CONTIG-NEXT:       reshard_rt.send to 1 bytes 48 staging 0 pack = [0, 0, 0, 48, 0]{{$}}
// CONTIG-NEXT:       reshard_rt.send to 2 bytes 48 staging 48 pack = [0, 0, 48, 48, 0]{{$}}
// CONTIG-NEXT:     }
// CONTIG-NEXT:   }
// CONTIG-NEXT:   reshard_rt.rank 1 workspace = 48 shards = [0, -1, 48] {
// CONTIG-NEXT:     reshard_rt.step 0 {
// CONTIG-NEXT:       reshard_rt.recv from 0 bytes 48 staging 0 unpack = [0, 1, 0, 48, 0]{{$}}
// CONTIG-NEXT:     }
// CONTIG-NEXT:   }
// CONTIG-NEXT:   reshard_rt.rank 2 workspace = 48 shards = [0, -1, 48] {
// CONTIG-NEXT:     reshard_rt.step 0 {
// CONTIG-NEXT:       reshard_rt.recv from 0 bytes 48 staging 0 unpack = [0, 1, 0, 48, 0]{{$}}
// CONTIG-NEXT:     }
// CONTIG-NEXT:   }
// CONTIG-NEXT: }

//--- three-d.mlir
// Two 3-D f32 tensors from rank 0 (whole) to tp = 2 on ranks 1, 2; the
// plan takes the module's name.
// @w [2, 4, 3] (strides [48, 12, 4], 96 B) split on dim 1: rank 1 + i gets
//   [0:2, 2i:2i+2, 0:3]. On rank 0 dim 2 is whole, so dim 1 joins the run
//   (2 x 3 x 4 = 24 B) and stops there (2 of 4); dim 0 is a loop of 2,
//   stride 48: [0, 0, 24i, 24, 1, 2, 48]. On the destination (local
//   [2, 2, 3], 48 B) all dims are whole: [0, 1, 0, 48, 0].
// @v [2, 2, 4] (strides [32, 16, 4], 64 B) split on dim 2: rank 1 + i gets
//   [0:2, 0:2, 2i:2i+2]. On rank 0 the run is 2 x 4 = 8 B (dim 2 not
//   whole); loops (2, 32) and (2, 16), and 32 = 2 x 16, so they merge into
//   one loop (4, 16): [1, 0, 8i, 8, 1, 4, 16]. Destination local [2, 2, 2]
//   is whole: [1, 1, 0, 32, 0].
// One message per pair, @w then @v: 48 + 32 = 80 B; rank 0's sends at 0
// and 80 (a multiple of 16) -> 160.
module @three_d {
  reshard.mesh @one shape = [1] axes = ["x"] ranks = [0]
  reshard.mesh @tp shape = [2] axes = ["tp"] ranks = [1, 2]
  reshard.redistribute @w from @one <[[], [], []]> to @tp <[[], [tp], []]>
      : tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  reshard.redistribute @v from @one <[[], [], []]> to @tp <[[], [], [tp]]>
      : tensor<2x2x4xf32> -> tensor<2x2x4xf32>
}

// THREE-D:      module @three_d {
// THREE-D-NEXT:   reshard_rt.plan @three_d num_ranks = 3 tensors = ["w", "v"]
// THREE-D-NEXT:     reshard_rt.rank 0 workspace = 160 shards = [0, 96, -1, 1, 64, -1] {
// THREE-D-NEXT:       reshard_rt.step 0 {
// THREE-D-NEXT:         reshard_rt.send to 1 bytes 80 staging 0 pack = [0, 0, 0, 24, 1, 2, 48, 1, 0, 0, 8, 1, 4, 16]{{$}}
// THREE-D-NEXT:         reshard_rt.send to 2 bytes 80 staging 80 pack = [0, 0, 24, 24, 1, 2, 48, 1, 0, 8, 8, 1, 4, 16]{{$}}
// THREE-D-NEXT:       }
// THREE-D-NEXT:     }
// THREE-D-NEXT:     reshard_rt.rank 1 workspace = 80 shards = [0, -1, 48, 1, -1, 32] {
// THREE-D-NEXT:       reshard_rt.step 0 {
// THREE-D-NEXT:         reshard_rt.recv from 0 bytes 80 staging 0 unpack = [0, 1, 0, 48, 0, 1, 1, 0, 32, 0]{{$}}
// THREE-D-NEXT:       }
// THREE-D-NEXT:     }
// THREE-D-NEXT:     reshard_rt.rank 2 workspace = 80 shards = [0, -1, 48, 1, -1, 32] {
// THREE-D-NEXT:       reshard_rt.step 0 {
// THREE-D-NEXT:         reshard_rt.recv from 0 bytes 80 staging 0 unpack = [0, 1, 0, 48, 0, 1, 1, 0, 32, 0]{{$}}
// THREE-D-NEXT:       }
// THREE-D-NEXT:     }
// THREE-D-NEXT:   }
// THREE-D-NEXT: }

// plan-name wins over the module's name.
// RENAMED: reshard_rt.plan @_renamed2 num_ranks = 3

//--- count-one.mlir
// [2, 2, 4] f32 whole on rank 0 (strides [32, 16, 4], 64 B) to a 2 x 2
// mesh (ranks 1 + 2a + b), dim 0 over a and dim 2 over b: each gets
// [a:a+1, 0:2, 2b:2b+2] (local [1, 2, 2], 16 B, whole on arrival). On rank
// 0 the run is 2 x 4 = 8 B (dim 2: 2 of 4); dim 0 is a loop of count 1,
// dropped, leaving one loop (2, 16) over dim 1, from byte 32a + 8b:
// [0, 0, 32a + 8b, 8, 1, 2, 16]. Four 16 B sends at 0, 16, 32, 48 -> 64.
reshard.mesh @one shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @g shape = [2, 2] axes = ["a", "b"] ranks = [1, 2, 3, 4]
reshard.redistribute @x from @one <[[], [], []]> to @g <[[a], [], [b]]>
    : tensor<2x2x4xf32> -> tensor<2x2x4xf32>

// COUNT-ONE:      reshard_rt.plan @reshard_plan num_ranks = 5 tensors = ["x"]
// COUNT-ONE-NEXT:   reshard_rt.rank 0 workspace = 64 shards = [0, 64, -1] {
// COUNT-ONE-NEXT:     reshard_rt.step 0 {
// COUNT-ONE-NEXT:       reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 8, 1, 2, 16]{{$}}
// COUNT-ONE-NEXT:       reshard_rt.send to 2 bytes 16 staging 16 pack = [0, 0, 8, 8, 1, 2, 16]{{$}}
// COUNT-ONE-NEXT:       reshard_rt.send to 3 bytes 16 staging 32 pack = [0, 0, 32, 8, 1, 2, 16]{{$}}
// COUNT-ONE-NEXT:       reshard_rt.send to 4 bytes 16 staging 48 pack = [0, 0, 40, 8, 1, 2, 16]{{$}}
// COUNT-ONE-NEXT:     }
// COUNT-ONE-NEXT:   }
// COUNT-ONE-NEXT:   reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
// COUNT-ONE-NEXT:     reshard_rt.step 0 {
// COUNT-ONE-NEXT:       reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]{{$}}
// COUNT-ONE-NEXT:     }
// COUNT-ONE-NEXT:   }
// COUNT-ONE:        reshard_rt.rank 4 workspace = 16 shards = [0, -1, 16] {
// COUNT-ONE-NEXT:     reshard_rt.step 0 {
// COUNT-ONE-NEXT:       reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]{{$}}
// COUNT-ONE-NEXT:     }
// COUNT-ONE-NEXT:   }
// COUNT-ONE-NEXT: }

//--- local-copy.mlir
// [4, 4] f32 by columns over tp = 2 on ranks 0, 1 (local [4, 2], strides
// [8, 4], 32 B) to replicated on the same ranks ([4, 4], strides [16, 4],
// 64 B): an all-gather. Rank c keeps cols [2c, 2c + 2) locally: whole in
// the source (2 of 2) but not in the destination (2 of 4), so the run is
// 2 x 4 = 8 B, with a loop of 4 rows, source stride 8, destination stride
// 16: copy [0, 0, 8c, 8, 1, 4, 8, 16]. The other half comes from the peer:
// packed from its whole source shard, [0, 0, 0, 32, 0], and unpacked at
// column 2 - 2c: [0, 1, 8 - 8c, 8, 1, 4, 16]. Each rank sends 32 B at 0
// and then receives 32 B at 32 -> workspace 64.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[], [tp]]> to @m <[[], []]>
    : tensor<4x4xf32> -> tensor<4x4xf32>

// COPY:      reshard_rt.plan @reshard_plan num_ranks = 2 tensors = ["w"]
// COPY-NEXT:   reshard_rt.rank 0 workspace = 64 shards = [0, 32, 64] {
// COPY-NEXT:     reshard_rt.copy [0, 0, 0, 8, 1, 4, 8, 16]{{$}}
// COPY-NEXT:     reshard_rt.step 0 {
// COPY-NEXT:       reshard_rt.send to 1 bytes 32 staging 0 pack = [0, 0, 0, 32, 0]{{$}}
// COPY-NEXT:       reshard_rt.recv from 1 bytes 32 staging 32 unpack = [0, 1, 8, 8, 1, 4, 16]{{$}}
// COPY-NEXT:     }
// COPY-NEXT:   }
// COPY-NEXT:   reshard_rt.rank 1 workspace = 64 shards = [0, 32, 64] {
// COPY-NEXT:     reshard_rt.copy [0, 0, 8, 8, 1, 4, 8, 16]{{$}}
// COPY-NEXT:     reshard_rt.step 0 {
// COPY-NEXT:       reshard_rt.send to 0 bytes 32 staging 0 pack = [0, 0, 0, 32, 0]{{$}}
// COPY-NEXT:       reshard_rt.recv from 0 bytes 32 staging 32 unpack = [0, 1, 0, 8, 1, 4, 16]{{$}}
// COPY-NEXT:     }
// COPY-NEXT:   }
// COPY-NEXT: }

//--- relay.mlir
// [2, 4] f32 whole on rank 0 (strides [16, 4], 32 B) to columns over tp,
// replicated over dp, on ranks 4-7 (local [2, 2], 16 B): tp 0 on 4, 5 and
// tp 1 on 6, 7. Each half crosses once, to 4 and 6 in step 0, and is
// forwarded to 5 (via 4) and 7 (via 6) in step 1 (a hand-written table of
// the shape reshard-select-sources makes).
//   rank 0 packs [0:2, 2c:2c+2]: run 2 x 4 = 8 B, loop (2, 16), at 8c.
//   the relay packs the same box from its destination shard (buffer 1),
//     where it received it: the whole shard, [0, 1, 0, 16, 0], not the
//     strided source box [0, 0, 8, 8, 1, 2, 16].
//   every receiver unpacks its whole shard: [0, 1, 0, 16, 0].
// Ranks 1-3 are in no mesh and get no program.
reshard.mesh @src shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @dst shape = [2, 2] axes = ["tp", "dp"] ranks = [4, 5, 6, 7]
reshard.redistribute @w from @src <[[], []]> to @dst <[[], [tp]]>
    : tensor<2x4xf32> -> tensor<2x4xf32>
reshard.pieces @w rank 2 holders [[0]] [
  box [0, 0] size [2, 2] from 0 at [0, 0] to 4 at [0, 0] group 0,
  box [0, 0] size [2, 2] from 0 at [0, 0] to 5 at [0, 0] group 0 via 4 step 1,
  box [0, 2] size [2, 2] from 0 at [0, 2] to 6 at [0, 0] group 0,
  box [0, 2] size [2, 2] from 0 at [0, 2] to 7 at [0, 0] group 0 via 6 step 1
]

// EXEC-RELAY: checked 1 tensors, 4 pieces, 16 destination elements: all correct

// RELAY:      reshard_rt.plan @reshard_plan num_ranks = 8 tensors = ["w"]
// RELAY-NEXT:   reshard_rt.rank 0 workspace = 32 shards = [0, 32, -1] {
// RELAY-NEXT:     reshard_rt.step 0 {
// RELAY-NEXT:       reshard_rt.send to 4 bytes 16 staging 0 pack = [0, 0, 0, 8, 1, 2, 16]{{$}}
// RELAY-NEXT:       reshard_rt.send to 6 bytes 16 staging 16 pack = [0, 0, 8, 8, 1, 2, 16]{{$}}
// RELAY-NEXT:     }
// RELAY-NEXT:   }
// RELAY-NEXT:   reshard_rt.rank 4 workspace = 16 shards = [0, -1, 16] {
// RELAY-NEXT:     reshard_rt.step 0 {
// RELAY-NEXT:       reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]{{$}}
// RELAY-NEXT:     }
// RELAY-NEXT:     reshard_rt.step 1 {
// RELAY-NEXT:       reshard_rt.send to 5 bytes 16 staging 0 pack = [0, 1, 0, 16, 0]{{$}}
// RELAY-NEXT:     }
// RELAY-NEXT:   }
// RELAY-NEXT:   reshard_rt.rank 5 workspace = 16 shards = [0, -1, 16] {
// RELAY-NEXT:     reshard_rt.step 1 {
// RELAY-NEXT:       reshard_rt.recv from 4 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]{{$}}
// RELAY-NEXT:     }
// RELAY-NEXT:   }
// RELAY-NEXT:   reshard_rt.rank 6 workspace = 16 shards = [0, -1, 16] {
// RELAY-NEXT:     reshard_rt.step 0 {
// RELAY-NEXT:       reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]{{$}}
// RELAY-NEXT:     }
// RELAY-NEXT:     reshard_rt.step 1 {
// RELAY-NEXT:       reshard_rt.send to 7 bytes 16 staging 0 pack = [0, 1, 0, 16, 0]{{$}}
// RELAY-NEXT:     }
// RELAY-NEXT:   }
// RELAY-NEXT:   reshard_rt.rank 7 workspace = 16 shards = [0, -1, 16] {
// RELAY-NEXT:     reshard_rt.step 1 {
// RELAY-NEXT:       reshard_rt.recv from 6 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]{{$}}
// RELAY-NEXT:     }
// RELAY-NEXT:   }
// RELAY-NEXT: }

//--- steps.mlir
// Two steps, hand-scheduled. @a: 6 x f32 over tp = 2 on ranks 0, 1 (12 B
// each) to replicated on both (24 B): each keeps its half by a local copy
// ([0, 0, 12c, 12, 0]); rank 1 sends its half to rank 0 in step 0, rank 0
// sends its half to rank 1 in step 1. @b: 8 x f32 (32 B) from rank 0 to
// rank 1 in step 1, so step 1's message 0 -> 1 is @a then @b: 12 + 32 =
// 44 B, packed [0, 0, 0, 12, 0, 1, 0, 0, 32, 0] and unpacked at @a's
// byte 0 and @b's byte 0. Workspace = the larger step: step 0 needs 12 ->
// 16, step 1 needs 44 -> 48, so 48 on both ranks.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @r0 shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @r1 shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @a from @m <[[tp]]> to @m <[[]]>
    : tensor<6xf32> -> tensor<6xf32>
reshard.pieces @a rank 1 holders [[0], [1]] [
  box [0] size [3] from 0 at [0] to 0 at [0] group 0,
  box [3] size [3] from 1 at [0] to 0 at [3] group 1,
  box [0] size [3] from 0 at [0] to 1 at [0] group 0 step 1,
  box [3] size [3] from 1 at [0] to 1 at [3] group 1
]
reshard.redistribute @b from @r0 <[[]]> to @r1 <[[]]>
    : tensor<8xf32> -> tensor<8xf32>
reshard.pieces @b rank 1 holders [[0]] [
  box [0] size [8] from 0 at [0] to 1 at [0] group 0 step 1
]

// EXEC-STEPS: checked 2 tensors, 5 pieces, 20 destination elements: all correct

// STEPS:      reshard_rt.plan @reshard_plan num_ranks = 2 tensors = ["a", "b"]
// STEPS-NEXT:   reshard_rt.rank 0 workspace = 48 shards = [0, 12, 24, 1, 32, -1] {
// STEPS-NEXT:     reshard_rt.copy [0, 0, 0, 12, 0]{{$}}
// STEPS-NEXT:     reshard_rt.step 0 {
// STEPS-NEXT:       reshard_rt.recv from 1 bytes 12 staging 0 unpack = [0, 1, 12, 12, 0]{{$}}
// STEPS-NEXT:     }
// STEPS-NEXT:     reshard_rt.step 1 {
// STEPS-NEXT:       reshard_rt.send to 1 bytes 44 staging 0 pack = [0, 0, 0, 12, 0, 1, 0, 0, 32, 0]{{$}}
// STEPS-NEXT:     }
// STEPS-NEXT:   }
// STEPS-NEXT:   reshard_rt.rank 1 workspace = 48 shards = [0, 12, 24, 1, -1, 32] {
// STEPS-NEXT:     reshard_rt.copy [0, 0, 12, 12, 0]{{$}}
// STEPS-NEXT:     reshard_rt.step 0 {
// STEPS-NEXT:       reshard_rt.send to 0 bytes 12 staging 0 pack = [0, 0, 0, 12, 0]{{$}}
// STEPS-NEXT:     }
// STEPS-NEXT:     reshard_rt.step 1 {
// STEPS-NEXT:       reshard_rt.recv from 0 bytes 44 staging 0 unpack = [0, 1, 0, 12, 0, 1, 1, 0, 32, 0]{{$}}
// STEPS-NEXT:     }
// STEPS-NEXT:   }
// STEPS-NEXT: }

//--- split.mlir
// The full pipeline with a tight budget (the split case of
// reshard-schedule.mlir): 32 x f32 = 128 B from rank 0 to rank 1, budget
// 127 -> [0, 31) = 124 B in step 0 and [31, 32) = 4 B at byte 124 in step
// 1. Workspace = the larger step: 124 rounded up to 16 = 128.
reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [1]
reshard.redistribute @w from @a <[[]]> to @b <[[]]>
    : tensor<32xf32> -> tensor<32xf32>

// SPLIT:      reshard_rt.plan @reshard_plan num_ranks = 2 tensors = ["w"]
// SPLIT-NEXT:   reshard_rt.rank 0 workspace = 128 shards = [0, 128, -1] {
// SPLIT-NEXT:     reshard_rt.step 0 {
// SPLIT-NEXT:       reshard_rt.send to 1 bytes 124 staging 0 pack = [0, 0, 0, 124, 0]{{$}}
// SPLIT-NEXT:     }
// SPLIT-NEXT:     reshard_rt.step 1 {
// SPLIT-NEXT:       reshard_rt.send to 1 bytes 4 staging 0 pack = [0, 0, 124, 4, 0]{{$}}
// SPLIT-NEXT:     }
// SPLIT-NEXT:   }
// SPLIT-NEXT:   reshard_rt.rank 1 workspace = 128 shards = [0, -1, 128] {
// SPLIT-NEXT:     reshard_rt.step 0 {
// SPLIT-NEXT:       reshard_rt.recv from 0 bytes 124 staging 0 unpack = [0, 1, 0, 124, 0]{{$}}
// SPLIT-NEXT:     }
// SPLIT-NEXT:     reshard_rt.step 1 {
// SPLIT-NEXT:       reshard_rt.recv from 0 bytes 4 staging 0 unpack = [0, 1, 124, 4, 0]{{$}}
// SPLIT-NEXT:     }
// SPLIT-NEXT:   }
// SPLIT-NEXT: }

//--- scalar.mlir
// A 0-D f64 (8 B) replicated on ranks 0, 1 to replicated on ranks 1, 2:
// rank 1 copies its own ([0, 0, 0, 8, 0]: no dims, so the run is one
// element and there are no loops), rank 0 sends to rank 2 (8 B at 0 ->
// workspace 16). Rank 1 has no message: workspace 0.
reshard.mesh @a shape = [2] axes = ["x"] ranks = [0, 1]
reshard.mesh @b shape = [2] axes = ["y"] ranks = [1, 2]
reshard.redistribute @s from @a <[]> to @b <[]>
    : tensor<f64> -> tensor<f64>
reshard.pieces @s rank 0 holders [[0, 1]] [
  box [] size [] from 1 at [] to 1 at [] group 0,
  box [] size [] from 0 at [] to 2 at [] group 0
]

// EXEC-SCALAR: checked 1 tensors, 2 pieces, 2 destination elements: all correct

// SCALAR:      reshard_rt.plan @reshard_plan num_ranks = 3 tensors = ["s"]
// SCALAR-NEXT:   reshard_rt.rank 0 workspace = 16 shards = [0, 8, -1] {
// SCALAR-NEXT:     reshard_rt.step 0 {
// SCALAR-NEXT:       reshard_rt.send to 2 bytes 8 staging 0 pack = [0, 0, 0, 8, 0]{{$}}
// SCALAR-NEXT:     }
// SCALAR-NEXT:   }
// SCALAR-NEXT:   reshard_rt.rank 1 workspace = 0 shards = [0, 8, 8] {
// SCALAR-NEXT:     reshard_rt.copy [0, 0, 0, 8, 0]{{$}}
// SCALAR-NEXT:   }
// SCALAR-NEXT:   reshard_rt.rank 2 workspace = 16 shards = [0, -1, 8] {
// SCALAR-NEXT:     reshard_rt.step 0 {
// SCALAR-NEXT:       reshard_rt.recv from 0 bytes 8 staging 0 unpack = [0, 1, 0, 8, 0]{{$}}
// SCALAR-NEXT:     }
// SCALAR-NEXT:   }
// SCALAR-NEXT: }

//--- not-in-mesh.mlir
// Ranks outside a side's mesh. @u: 1 x f32 over tp = 2 on ranks 0, 2
// (chunks of ceil(1/2) = 1: rank 0 holds it, rank 2 an empty shard, 0 B)
// to rank 3. @v: 3 x i8 from rank 3 to rank 0. So rank 0 is a @u source
// and a @v destination ([4, -1], [-1, 3]), rank 2 an empty @u source with
// nothing to do ([0, -1], [-1, -1]), rank 3 the other way round ([-1, 3],
// [4, -1]); rank 1 is in no mesh and has no program, but still counts in
// num_ranks = 4. Ranks 0 and 3 each send then receive: staging 0 and 16,
// workspace 32.
reshard.mesh @a shape = [2] axes = ["tp"] ranks = [0, 2]
reshard.mesh @b shape = [1] axes = ["x"] ranks = [3]
reshard.mesh @c shape = [1] axes = ["x"] ranks = [0]
reshard.redistribute @u from @a <[[tp]]> to @b <[[]]>
    : tensor<1xf32> -> tensor<1xf32>
reshard.redistribute @v from @b <[[]]> to @c <[[]]>
    : tensor<3xi8> -> tensor<3xi8>

// NO-MESH:      reshard_rt.plan @reshard_plan num_ranks = 4 tensors = ["u", "v"]
// NO-MESH-NEXT:   reshard_rt.rank 0 workspace = 32 shards = [0, 4, -1, 1, -1, 3] {
// NO-MESH-NEXT:     reshard_rt.step 0 {
// NO-MESH-NEXT:       reshard_rt.send to 3 bytes 4 staging 0 pack = [0, 0, 0, 4, 0]{{$}}
// NO-MESH-NEXT:       reshard_rt.recv from 3 bytes 3 staging 16 unpack = [1, 1, 0, 3, 0]{{$}}
// NO-MESH-NEXT:     }
// NO-MESH-NEXT:   }
// NO-MESH-NEXT:   reshard_rt.rank 2 workspace = 0 shards = [0, 0, -1] {
// NO-MESH-NEXT:   }
// NO-MESH-NEXT:   reshard_rt.rank 3 workspace = 32 shards = [0, -1, 4, 1, 3, -1] {
// NO-MESH-NEXT:     reshard_rt.step 0 {
// NO-MESH-NEXT:       reshard_rt.send to 0 bytes 3 staging 0 pack = [1, 0, 0, 3, 0]{{$}}
// NO-MESH-NEXT:       reshard_rt.recv from 0 bytes 4 staging 16 unpack = [0, 1, 0, 4, 0]{{$}}
// NO-MESH-NEXT:     }
// NO-MESH-NEXT:   }
// NO-MESH-NEXT: }

//--- empty.mlir
// No redistributions: still a valid plan, over a communicator of one rank
// (num_ranks = 0 would fail the plan verifier), with no tensors and no
// programs.

// EMPTY:      module {
// EMPTY-NEXT:   reshard_rt.plan @reshard_plan num_ranks = 1 tensors = [] fingerprint = {{-?[0-9]+}} {
// EMPTY-NEXT:   }
// EMPTY-NEXT: }

//--- mesh-only.mlir
// A mesh that no redistribution uses adds no ranks, and goes with the
// layout.
module @idle {
  reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
}

// MESH-ONLY:      module @idle {
// MESH-ONLY-NEXT:   reshard_rt.plan @idle num_ranks = 1 tensors = [] fingerprint = {{-?[0-9]+}} {
// MESH-ONLY-NEXT:   }
// MESH-ONLY-NEXT: }
