// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (f): the same layout on the same ranks. Every
// destination rank already holds its whole shard, so every piece is a local
// copy (source == destination), including on the dp replicas, which must
// not read from the lowest holder. Worked out by hand from docs/Layout.md,
// then executed and checked.
//
// [4, 4], mesh [2, 2] (dp, tp) on ranks 0-3, rows over tp in chunks of 2,
// dp replicating: tp0 rows [0, 2) on ranks {0, 2}, tp1 rows [2, 4) on
// ranks {1, 3}. Each rank copies its own [2, 4] shard from [0, 0] to [0, 0].

reshard.mesh @m shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
reshard.redistribute @w from @m <[[tp], []]> to @m <[[tp], []]>
    : tensor<4x4xi32> -> tensor<4x4xi32>

// CHECK:      reshard.redistribute @w from @m
// CHECK-NEXT: reshard.pieces @w rank 2 holders {{\[\[}}0, 2], [1, 3]] [
// CHECK-NEXT:   box [0, 0] size [2, 4] from 0 at [0, 0] to 0 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 0] size [2, 4] from 1 at [0, 0] to 1 at [0, 0] group 1,
// CHECK-NEXT:   box [0, 0] size [2, 4] from 2 at [0, 0] to 2 at [0, 0] group 0,
// CHECK-NEXT:   box [2, 0] size [2, 4] from 3 at [0, 0] to 3 at [0, 0] group 1{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// 4 destination ranks x 2 x 4 elements.
// EXEC: checked 1 tensors, 4 pieces, 32 destination elements: all correct
