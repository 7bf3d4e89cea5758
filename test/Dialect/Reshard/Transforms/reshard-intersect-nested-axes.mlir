// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (k): two axes on one dim of the destination,
// [dp, tp] major to minor. The split is nested (chunk by dp, then chunk each
// dp chunk by tp), which with 10 rows differs from a flat split over 4
// devices ([0, 3) [3, 6) [6, 9) [9, 10)) and from [tp, dp]. Worked out by hand
// from docs/Layout.md, then executed and checked.
//
// [10, 2]. Source tp = 3 on ranks 0-2, chunks of ceil(10/3) = 4:
//   rank 0 [0, 4), rank 1 [4, 8), rank 2 [8, 10).
// Destination mesh [2, 2] (dp, tp) on ranks 4-7: dp chunks of ceil(10/2) = 5,
// [0, 5) and [5, 10); each into tp chunks of ceil(5/2) = 3:
//   rank 4 (0,0) [0, 3), rank 5 (0,1) [3, 5), rank 6 (1,0) [5, 8),
//   rank 7 (1,1) [8, 10).
// Intersections:
//   rank 4: [0, 3) from 0 at 0 to 0
//   rank 5: [3, 4) from 0 at 3 to 0; [4, 5) from 1 at 0 to 1
//   rank 6: [5, 8) from 1 at 1 to 0
//   rank 7: [8, 10) from 2 at 0 to 0

reshard.mesh @src shape = [3] axes = ["tp"] ranks = [0, 1, 2]
reshard.mesh @dst shape = [2, 2] axes = ["dp", "tp"] ranks = [4, 5, 6, 7]
reshard.redistribute @w from @src <[[tp], []]> to @dst <[[dp, tp], []]>
    : tensor<10x2xbf16> -> tensor<10x2xbf16>

// CHECK:      reshard.redistribute @w from @src
// CHECK-NEXT: reshard.pieces @w rank 2 holders {{\[\[}}0], [1], [2]] [
// CHECK-NEXT:   box [0, 0] size [3, 2] from 0 at [0, 0] to 4 at [0, 0] group 0,
// CHECK-NEXT:   box [3, 0] size [1, 2] from 0 at [3, 0] to 5 at [0, 0] group 0,
// CHECK-NEXT:   box [4, 0] size [1, 2] from 1 at [0, 0] to 5 at [1, 0] group 1,
// CHECK-NEXT:   box [5, 0] size [3, 2] from 1 at [1, 0] to 6 at [0, 0] group 1,
// CHECK-NEXT:   box [8, 0] size [2, 2] from 2 at [0, 0] to 7 at [0, 0] group 2{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// 10 rows x 2 destination elements.
// EXEC: checked 1 tensors, 5 pieces, 20 destination elements: all correct
