// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (e): data-parallel replicas on the source. Source
// devices that differ only on the replicating dp axis form one holder group
// (ascending), and a destination outside the source sends from the lowest
// holder, not the first in mesh order: the mesh lists its ranks out of
// order to tell the two apart. Worked out by hand from docs/Layout.md, then
// executed and checked.
//
// [4, 4]. Source mesh [2, 2] (dp, tp), ranks [6, 2, 1, 7] in row-major
// order: (dp0,tp0)=6 (dp0,tp1)=2 (dp1,tp0)=1 (dp1,tp1)=7. Rows over tp in
// chunks of 2, dp unused:
//   tp0 rows [0, 2) held by {6, 1} -> group [1, 6], sent from 1
//   tp1 rows [2, 4) held by {2, 7} -> group [2, 7], sent from 2
// Destination tp = 2 on ranks 4-5, columns in chunks of 2: rank 4 + c takes
// cols [2c, 2c+2) of both row blocks (source local [0, 2c]).

reshard.mesh @train shape = [2, 2] axes = ["dp", "tp"] ranks = [6, 2, 1, 7]
reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [4, 5]
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[], [tp]]>
    : tensor<4x4xf64> -> tensor<4x4xf64>

// CHECK:      reshard.redistribute @w from @train
// CHECK-NEXT: reshard.pieces @w rank 2 holders {{\[\[}}1, 6], [2, 7]] [
// CHECK-NEXT:   box [0, 0] size [2, 2] from 1 at [0, 0] to 4 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 0] size [2, 2] from 2 at [0, 0] to 4 at [2, 0] group 1,
// CHECK-NEXT:   box [0, 2] size [2, 2] from 1 at [0, 2] to 5 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 2] size [2, 2] from 2 at [0, 2] to 5 at [2, 0] group 1{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// 2 destination ranks x 4 x 2 elements.
// EXEC: checked 1 tensors, 4 pieces, 16 destination elements: all correct
