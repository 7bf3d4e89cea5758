// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | FileCheck %s --check-prefix=CLASS
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (b): row-sharded -> column-sharded, so every
// destination shard is cut by every source shard. Worked out by hand from
// docs/Layout.md, then executed and checked element by element.
//
// [4, 6]. Source tp = 2 on ranks 0-1, rows in chunks of ceil(4/2) = 2:
// rank 0 rows [0, 2), rank 1 rows [2, 4); local shape [2, 6].
// Destination tp = 3 on ranks 2-4, columns in chunks of ceil(6/3) = 2:
// rank 2 cols [0, 2), rank 3 cols [2, 4), rank 4 cols [4, 6); local [4, 2].
// Destination rank 2 + c takes cols [2c, 2c+2) of both row blocks:
//   rows [0, 2) from rank 0 at local [0, 2c], landing at [0, 0];
//   rows [2, 4) from rank 1 at local [0, 2c], landing at [2, 0].

reshard.mesh @rows shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @cols shape = [3] axes = ["tp"] ranks = [2, 3, 4]
reshard.redistribute @w from @rows <[[tp], []]> to @cols <[[], [tp]]>
    : tensor<4x6xbf16> -> tensor<4x6xbf16>

// CHECK:      reshard.redistribute @w from @rows
// CHECK-NEXT: reshard.pieces @w rank 2 holders {{\[\[}}0], [1]] [
// CHECK-NEXT:   box [0, 0] size [2, 2] from 0 at [0, 0] to 2 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 0] size [2, 2] from 1 at [0, 0] to 2 at [2, 0] group 1,
// CHECK-NEXT:   box [0, 2] size [2, 2] from 0 at [0, 2] to 3 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 2] size [2, 2] from 1 at [0, 2] to 3 at [2, 0] group 1,
// CHECK-NEXT:   box [0, 4] size [2, 2] from 0 at [0, 4] to 4 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 4] size [2, 2] from 1 at [0, 4] to 4 at [2, 0] group 1{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// The compact form: one class (its pieces in mesh coordinates: combo c is
// destination column block c, or source row block c) and one group.
// CLASS:      reshard.class @class0 of @w rank 2 [
// CLASS-NEXT:   box [0, 0] size [2, 2] dst 0 at [0, 0] src 0 at [0, 0],
// CLASS-NEXT:   box [2, 0] size [2, 2] dst 0 at [2, 0] src 1 at [0, 0],
// CLASS-NEXT:   box [0, 2] size [2, 2] dst 1 at [0, 0] src 0 at [0, 2],
// CLASS-NEXT:   box [2, 2] size [2, 2] dst 1 at [2, 0] src 1 at [0, 2],
// CLASS-NEXT:   box [0, 4] size [2, 2] dst 2 at [0, 0] src 0 at [0, 4],
// CLASS-NEXT:   box [2, 4] size [2, 2] dst 2 at [2, 0] src 1 at [0, 4]
// CLASS-NEXT: ]
// CLASS-NEXT: reshard.group @group0 class @class0 from @rows to @cols tensors [@w]
// CLASS-NOT:  reshard.pieces

// 3 destination ranks x 4 x 2 elements.
// EXEC: checked 1 tensors, 6 pieces, 24 destination elements: all correct
