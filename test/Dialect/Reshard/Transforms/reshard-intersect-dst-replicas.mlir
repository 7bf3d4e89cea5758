// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | FileCheck %s --check-prefix=CLASS
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (l): replication on the destination. Ranks that
// differ only on the unused dp axis need the same boxes, and each gets its
// own pieces (later passes decide whether one copy is forwarded). Pieces
// are grouped by destination rank, each rank's in global order. Worked out
// by hand from docs/Layout.md, then executed and checked.
//
// [4, 4]. Source tp = 2 on ranks 0-1, rows in chunks of 2.
// Destination mesh [2, 2] (dp, tp) on ranks 2-5, columns over tp in chunks
// of 2, dp replicating: tp0 cols [0, 2) on ranks {2, 4}, tp1 cols [2, 4) on
// ranks {3, 5}. Each destination rank takes rows [0, 2) from rank 0 and
// rows [2, 4) from rank 1, at source local [0, 2 tp].

reshard.mesh @src shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @dst shape = [2, 2] axes = ["dp", "tp"] ranks = [2, 3, 4, 5]
reshard.redistribute @w from @src <[[tp], []]> to @dst <[[], [tp]]>
    : tensor<4x4xi16> -> tensor<4x4xi16>

// CHECK:      reshard.redistribute @w from @src
// CHECK-NEXT: reshard.pieces @w rank 2 holders {{\[\[}}0], [1]] [
// CHECK-NEXT:   box [0, 0] size [2, 2] from 0 at [0, 0] to 2 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 0] size [2, 2] from 1 at [0, 0] to 2 at [2, 0] group 1,
// CHECK-NEXT:   box [0, 2] size [2, 2] from 0 at [0, 2] to 3 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 2] size [2, 2] from 1 at [0, 2] to 3 at [2, 0] group 1,
// CHECK-NEXT:   box [0, 0] size [2, 2] from 0 at [0, 0] to 4 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 0] size [2, 2] from 1 at [0, 0] to 4 at [2, 0] group 1,
// CHECK-NEXT:   box [0, 2] size [2, 2] from 0 at [0, 2] to 5 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 2] size [2, 2] from 1 at [0, 2] to 5 at [2, 0] group 1{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// The class stores the pieces once per destination combo (the two
// replicas share them): 4 rows for the 8 pieces above.
// CLASS:      reshard.class @class0 of @w rank 2 [
// CLASS-NEXT:   box [0, 0] size [2, 2] dst 0 at [0, 0] src 0 at [0, 0],
// CLASS-NEXT:   box [2, 0] size [2, 2] dst 0 at [2, 0] src 1 at [0, 0],
// CLASS-NEXT:   box [0, 2] size [2, 2] dst 1 at [0, 0] src 0 at [0, 2],
// CLASS-NEXT:   box [2, 2] size [2, 2] dst 1 at [2, 0] src 1 at [0, 2]
// CLASS-NEXT: ]
// CLASS-NEXT: reshard.group @group0 class @class0 from @src to @dst tensors [@w]

// 4 destination ranks x 4 x 2 elements.
// EXEC: checked 1 tensors, 8 pieces, 32 destination elements: all correct
