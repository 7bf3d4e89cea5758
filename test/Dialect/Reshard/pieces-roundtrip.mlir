// RUN: reshard-opt %s | reshard-opt | FileCheck %s
// RUN: reshard-opt %s --mlir-print-op-generic | reshard-opt | FileCheck %s
// RUN: reshard-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// Round trip of reshard.pieces in custom and generic syntax: several holder
// groups of one and of several ranks, tensors of rank 0 to 3, an empty
// table, a quoted tensor name, a table written before its redistribution,
// and extra attributes. The GENERIC checks pin the dense storage: one row
// of [dst, src, group, via, step, box offset, sizes, dst offset, src offset] per piece
// (note that the text names the source before the destination) and the
// holder groups in CSR form. `[[` opens a FileCheck variable, hence
// `{{\[\[}}` in the patterns.

reshard.mesh @train shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [4, 5]

// CHECK:      reshard.redistribute @w from @train
// CHECK-NEXT: reshard.pieces @w rank 2 holders {{\[\[}}0, 2], [1, 3]] [
// CHECK-NEXT:   box [0, 0] size [2, 2] from 0 at [0, 0] to 4 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 0] size [2, 2] from 1 at [0, 0] to 4 at [2, 0] group 1,
// CHECK-NEXT:   box [0, 2] size [2, 2] from 0 at [0, 2] to 5 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 2] size [2, 2] from 3 at [0, 2] to 5 at [2, 0] group 1{{$}}
// CHECK-NEXT: ]{{$}}
// GENERIC:      "reshard.pieces"() <{holder_offsets = array<i64: 0, 2, 4>,
// GENERIC-SAME: holder_ranks = array<i64: 0, 2, 1, 3>, rank = 2 : i64,
// GENERIC-SAME: rows = array<i64: 4, 0, 0, -1, 0, 0, 0, 2, 2, 0, 0, 0, 0,
// GENERIC-SAME: 4, 1, 1, -1, 0, 2, 0, 2, 2, 2, 0, 0, 0,
// GENERIC-SAME: 5, 0, 0, -1, 0, 0, 2, 2, 2, 0, 0, 0, 2,
// GENERIC-SAME: 5, 3, 1, -1, 0, 2, 2, 2, 2, 2, 0, 0, 2>, tensor = @w}> : () -> (){{$}}
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[], [tp]]>
    : tensor<4x4xf32> -> tensor<4x4xf32>
reshard.pieces @w rank 2 holders [[0, 2], [1, 3]] [
  box [0, 0] size [2, 2] from 0 at [0, 0] to 4 at [0, 0] group 0,
  box [2, 0] size [2, 2] from 1 at [0, 0] to 4 at [2, 0] group 1,
  box [0, 2] size [2, 2] from 0 at [0, 2] to 5 at [0, 0] group 0,
  box [2, 2] size [2, 2] from 3 at [0, 2] to 5 at [2, 0] group 1
]

// A 0-D tensor: empty offset and size lists.
// CHECK:      reshard.redistribute @step from @train
// CHECK-NEXT: reshard.pieces @step rank 0 holders {{\[\[}}0, 1, 2, 3]] [
// CHECK-NEXT:   box [] size [] from 0 at [] to 4 at [] group 0,
// CHECK-NEXT:   box [] size [] from 0 at [] to 5 at [] group 0{{$}}
// CHECK-NEXT: ]{{$}}
// GENERIC:      "reshard.pieces"() <{holder_offsets = array<i64: 0, 4>,
// GENERIC-SAME: holder_ranks = array<i64: 0, 1, 2, 3>, rank = 0 : i64,
// GENERIC-SAME: rows = array<i64: 4, 0, 0, -1, 0, 5, 0, 0, -1, 0>, tensor = @step}>
reshard.redistribute @step from @train <[]> to @infer <[]>
    : tensor<f32> -> tensor<f32>
reshard.pieces @step rank 0 holders [[0, 1, 2, 3]] [
  box [] size [] from 0 at [] to 4 at [] group 0,
  box [] size [] from 0 at [] to 5 at [] group 0
]

// An empty table prints on one line.
// CHECK:      reshard.redistribute @empty from @train
// CHECK-NEXT: reshard.pieces @empty rank 2 holders [] []{{$}}
// GENERIC:      "reshard.pieces"() <{holder_offsets = array<i64: 0>,
// GENERIC-SAME: holder_ranks = array<i64>, rank = 2 : i64, rows = array<i64>,
// GENERIC-SAME: tensor = @empty}>
reshard.redistribute @empty from @train <[[tp], []]> to @infer <[[tp], []]>
    : tensor<0x3xi8> -> tensor<0x3xi8>
reshard.pieces @empty rank 2 holders [] [
]

// The table may come before its redistribution; extra attributes print in
// a trailing dictionary; a name that needs quotes keeps them.
// CHECK:      reshard.pieces @"lm_head/weight:0" rank 3 holders {{\[\[}}1]] [
// CHECK-NEXT:   box [0, 1, 2] size [1, 1, 3] from 1 at [0, 1, 2] to 4 at [0, 0, 0] group 0{{$}}
// CHECK-NEXT: ] {note = "hand-written"}{{$}}
// CHECK-NEXT: reshard.redistribute @"lm_head/weight:0" from @train
// GENERIC:      "reshard.pieces"() <{holder_offsets = array<i64: 0, 1>,
// GENERIC-SAME: holder_ranks = array<i64: 1>, rank = 3 : i64,
// GENERIC-SAME: rows = array<i64: 4, 1, 0, -1, 0, 0, 1, 2, 1, 1, 3, 0, 0, 0, 0, 1, 2>,
// GENERIC-SAME: tensor = @"lm_head/weight:0"}> {note = "hand-written"}
reshard.pieces @"lm_head/weight:0" rank 3 holders [[1]] [
  box [0, 1, 2] size [1, 1, 3] from 1 at [0, 1, 2] to 4 at [0, 0, 0] group 0
] {note = "hand-written"}
reshard.redistribute @"lm_head/weight:0" from @train <[[], [], []]>
    to @infer <[[], [], []]> : tensor<1x2x5xbf16> -> tensor<1x2x5xbf16>

// A rank-1 table on one line, every piece a local copy.
// CHECK:      reshard.redistribute @bias from @infer
// CHECK-NEXT: reshard.pieces @bias rank 1 holders {{\[\[}}4], [5]] [
// CHECK-NEXT:   box [0] size [3] from 4 at [0] to 4 at [0] group 0,
// CHECK-NEXT:   box [3] size [2] from 5 at [0] to 5 at [0] group 1{{$}}
// CHECK-NEXT: ]{{$}}
reshard.redistribute @bias from @infer <[[tp]]> to @infer <[[tp]]>
    : tensor<5xf16> -> tensor<5xf16>
reshard.pieces @bias rank 1 holders [[4], [5]] [box [0] size [3] from 4 at [0] to 4 at [0] group 0, box [3] size [2] from 5 at [0] to 5 at [0] group 1]
