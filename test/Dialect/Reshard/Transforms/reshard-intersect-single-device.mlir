// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (h): 1-device meshes (1-D of size 1 and 0-D).
// A mesh of one device holds the whole tensor whatever the sharding says
// (chunks of ceil(n/1) = n), so each tensor is a single whole-tensor piece:
// remote between different ranks, local when both meshes are rank 1.
//
//   @w [3, 5]: rank 0 -> rank 1, box [0, 0] size [3, 5]
//   @v [6]:    0-D mesh on rank 1 -> rank 0, box [0] size [6]
//   @u [2, 2]: rank 1 -> 0-D mesh on rank 1, local copy

reshard.mesh @a shape = [1] axes = ["x"] ranks = [0]
reshard.mesh @b shape = [1] axes = ["y"] ranks = [1]
reshard.mesh @s shape = [] axes = [] ranks = [1]
reshard.redistribute @w from @a <[[x], []]> to @b <[[], [y]]>
    : tensor<3x5xf32> -> tensor<3x5xf32>
reshard.redistribute @v from @s <[[]]> to @a <[[x]]>
    : tensor<6xi8> -> tensor<6xi8>
reshard.redistribute @u from @b <[[y], []]> to @s <[[], []]>
    : tensor<2x2xf16> -> tensor<2x2xf16>

// CHECK:      reshard.redistribute @w from @a
// CHECK-NEXT: reshard.pieces @w rank 2 holders {{\[\[}}0]] [
// CHECK-NEXT:   box [0, 0] size [3, 5] from 0 at [0, 0] to 1 at [0, 0] group 0{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NEXT: reshard.redistribute @v from @s
// CHECK-NEXT: reshard.pieces @v rank 1 holders {{\[\[}}1]] [
// CHECK-NEXT:   box [0] size [6] from 1 at [0] to 0 at [0] group 0{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NEXT: reshard.redistribute @u from @b
// CHECK-NEXT: reshard.pieces @u rank 2 holders {{\[\[}}1]] [
// CHECK-NEXT:   box [0, 0] size [2, 2] from 1 at [0, 0] to 1 at [0, 0] group 0{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// 15 + 6 + 4 destination elements.
// EXEC: checked 3 tensors, 3 pieces, 25 destination elements: all correct
