// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (i): partly overlapping rank sets. A destination
// rank that holds its whole box as a source replica copies it locally even
// though a lower rank holds it too; the others receive from the lowest
// holder, including a rank that is in the source mesh but holds other rows.
// Worked out by hand from docs/Layout.md, then executed and checked.
//
// [8, 2]. Source mesh [2, 2] (dp, tp) on ranks 0-3, rows over tp in chunks
// of 4, dp replicating: tp0 rows [0, 4) on {0, 2}, tp1 rows [4, 8) on
// {1, 3}. Destination tp = 4 on ranks 2-5, rows in chunks of 2:
//   rank 2 rows [0, 2): holds them (dp1, tp0)  -> local, from 2 at [0, 0]
//   rank 3 rows [2, 4): holds rows [4, 8) only -> from 0 at [2, 0]
//   rank 4 rows [4, 6): not a source           -> from 1 at [0, 0]
//   rank 5 rows [6, 8): not a source           -> from 1 at [2, 0]

reshard.mesh @train shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
reshard.mesh @infer shape = [4] axes = ["tp"] ranks = [2, 3, 4, 5]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[tp], []]>
    : tensor<8x2xf32> -> tensor<8x2xf32>

// CHECK:      reshard.redistribute @w from @train
// CHECK-NEXT: reshard.pieces @w rank 2 holders {{\[\[}}0, 2], [1, 3]] [
// CHECK-NEXT:   box [0, 0] size [2, 2] from 2 at [0, 0] to 2 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 0] size [2, 2] from 0 at [2, 0] to 3 at [0, 0] group 0,
// CHECK-NEXT:   box [4, 0] size [2, 2] from 1 at [0, 0] to 4 at [0, 0] group 1,
// CHECK-NEXT:   box [6, 0] size [2, 2] from 1 at [2, 0] to 5 at [0, 0] group 1{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// 4 destination ranks x 2 x 2 elements.
// EXEC: checked 1 tensors, 4 pieces, 16 destination elements: all correct
