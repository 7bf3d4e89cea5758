// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (a): TP4 -> TP2 on disjoint rank sets, the
// trainer-to-inference refit in its simplest form. The expected pieces were
// worked out by hand from the layout semantics of docs/Layout.md; the plan is
// then executed and every destination element checked.
//
// [8, 4] rows. Source tp = 4 on ranks 0-3: chunks of ceil(8/4) = 2 rows,
// rank r holds rows [2r, 2r+2). Destination tp = 2 on ranks 4-5: chunks of
// ceil(8/2) = 4 rows, rank 4 rows [0, 4), rank 5 rows [4, 8). Each
// destination takes two whole source shards, one after the other; no source
// axis replicates, so every holder group is one rank.

reshard.mesh @train shape = [4] axes = ["tp"] ranks = [0, 1, 2, 3]
reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [4, 5]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[tp], []]>
    : tensor<8x4xf32> -> tensor<8x4xf32>

// CHECK:      reshard.redistribute @w from @train
// CHECK-NEXT: reshard.pieces @w rank 2 holders {{\[\[}}0], [1], [2], [3]] [
// CHECK-NEXT:   box [0, 0] size [2, 4] from 0 at [0, 0] to 4 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 0] size [2, 4] from 1 at [0, 0] to 4 at [2, 0] group 1,
// CHECK-NEXT:   box [4, 0] size [2, 4] from 2 at [0, 0] to 5 at [0, 0] group 2,
// CHECK-NEXT:   box [6, 0] size [2, 4] from 3 at [0, 0] to 5 at [2, 0] group 3{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// 2 destination ranks x 4 x 4 elements.
// EXEC: checked 1 tensors, 4 pieces, 32 destination elements: all correct
