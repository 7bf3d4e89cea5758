// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (c): uneven sizes on both sides, so the source and
// destination chunk boundaries cross and pieces start inside source shards.
// Worked out by hand from docs/Layout.md, then executed and checked.
//
// [10, 2] rows. Source tp = 4 on ranks 0-3, chunks of ceil(10/4) = 3:
//   rank 0 [0, 3), rank 1 [3, 6), rank 2 [6, 9), rank 3 [9, 10) (short).
// Destination tp = 3 on ranks 4-6, chunks of ceil(10/3) = 4:
//   rank 4 [0, 4), rank 5 [4, 8), rank 6 [8, 10) (short).
// Intersections (global rows; source local row = row - source start,
// destination local row = row - destination start):
//   rank 4: [0, 3) from 0 at 0 to 0;  [3, 4)  from 1 at 0 to 3
//   rank 5: [4, 6) from 1 at 1 to 0;  [6, 8)  from 2 at 0 to 2
//   rank 6: [8, 9) from 2 at 2 to 0;  [9, 10) from 3 at 0 to 1

reshard.mesh @src shape = [4] axes = ["tp"] ranks = [0, 1, 2, 3]
reshard.mesh @dst shape = [3] axes = ["tp"] ranks = [4, 5, 6]
reshard.redistribute @w from @src <[[tp], []]> to @dst <[[tp], []]>
    : tensor<10x2xi8> -> tensor<10x2xi8>

// CHECK:      reshard.redistribute @w from @src
// CHECK-NEXT: reshard.pieces @w rank 2 holders {{\[\[}}0], [1], [2], [3]] [
// CHECK-NEXT:   box [0, 0] size [3, 2] from 0 at [0, 0] to 4 at [0, 0] group 0,
// CHECK-NEXT:   box [3, 0] size [1, 2] from 1 at [0, 0] to 4 at [3, 0] group 1,
// CHECK-NEXT:   box [4, 0] size [2, 2] from 1 at [1, 0] to 5 at [0, 0] group 1,
// CHECK-NEXT:   box [6, 0] size [2, 2] from 2 at [0, 0] to 5 at [2, 0] group 2,
// CHECK-NEXT:   box [8, 0] size [1, 2] from 2 at [2, 0] to 6 at [0, 0] group 2,
// CHECK-NEXT:   box [9, 0] size [1, 2] from 3 at [0, 0] to 6 at [1, 0] group 3{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// (4 + 4 + 2) x 2 destination elements.
// EXEC: checked 1 tensors, 6 pieces, 20 destination elements: all correct
