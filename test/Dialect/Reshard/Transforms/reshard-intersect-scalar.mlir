// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (j): a 0-D tensor, replicated on both sides, with
// the rank sets overlapping on rank 1. A 0-D piece has empty offset and size
// lists; there is one holder group (every source rank), rank 1 copies
// locally and ranks 2 and 3 receive from the lowest holder, 0.

reshard.mesh @src shape = [2] axes = ["dp"] ranks = [0, 1]
reshard.mesh @dst shape = [3] axes = ["dp"] ranks = [1, 2, 3]
reshard.redistribute @step from @src <[]> to @dst <[]>
    : tensor<f32> -> tensor<f32>

// CHECK:      reshard.redistribute @step from @src
// CHECK-NEXT: reshard.pieces @step rank 0 holders {{\[\[}}0, 1]] [
// CHECK-NEXT:   box [] size [] from 1 at [] to 1 at [] group 0,
// CHECK-NEXT:   box [] size [] from 0 at [] to 2 at [] group 0,
// CHECK-NEXT:   box [] size [] from 0 at [] to 3 at [] group 0{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// 3 destination ranks x 1 element.
// EXEC: checked 1 tensors, 3 pieces, 3 destination elements: all correct
