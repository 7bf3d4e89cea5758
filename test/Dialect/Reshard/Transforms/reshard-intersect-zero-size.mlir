// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (g): zero-size tensors have nothing to move, so
// each gets a pieces op with no holder groups and no pieces (sharded and
// blocked zero-size dims alike); the interpreter accepts the empty table.
//
// [0, 4]: every shard is [0, 4] or [0, 2]; [5, 0] in blocks [0, 5] is empty
// in dim 1 everywhere.

reshard.mesh @src shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @dst shape = [2] axes = ["tp"] ranks = [2, 3]
reshard.redistribute @rows from @src <[[tp], []]> to @dst <[[], [tp]]>
    : tensor<0x4xf32> -> tensor<0x4xf32>
reshard.redistribute @cols from @src <[[] blocks [0, 5], [tp]]>
    to @dst <[[tp], []]> : tensor<5x0xi8> -> tensor<5x0xi8>

// CHECK:      reshard.redistribute @rows from @src
// CHECK-NEXT: reshard.pieces @rows rank 2 holders [] []{{$}}
// CHECK-NEXT: reshard.redistribute @cols from @src
// CHECK-NEXT: reshard.pieces @cols rank 2 holders [] []{{$}}
// CHECK-NOT:  reshard.pieces

// EXEC: checked 2 tensors, 0 pieces, 0 destination elements: all correct
