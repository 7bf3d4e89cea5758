// The explicit pieces (reshard-expand spells out what the compact class
// and group stand for), also after a round trip of the compact form; then
// both the reference interpreter and the lowered plan on the engine.
// RUN: reshard-opt %s --reshard-intersect --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-opt --reshard-expand | FileCheck %s
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check | FileCheck %s --check-prefix=EXEC
// RUN: reshard-opt %s --reshard-intersect | reshard-run - --check --engine | FileCheck %s --check-prefix=EXEC

// reshard-intersect, case (d): a fused q/k/v weight declared as blocks
// [8, 2, 2], TP2 -> TP4. Each block is chunked on its own and a device's
// rows are its q, k, v chunks concatenated; the small k and v blocks leave
// some TP4 devices empty-handed. Worked out by hand from docs/Layout.md,
// then executed and checked.
//
// [12, 2], dim 0 = q [0, 8) ++ k [8, 10) ++ v [10, 12).
// Source tp = 2 on ranks 0-1: q in chunks of 4, k and v in chunks of 1.
//   rank 0: q [0, 4) at local 0-3, k 8 at 4, v 10 at 5 (local [6, 2])
//   rank 1: q [4, 8) at local 0-3, k 9 at 4, v 11 at 5
// Destination tp = 4 on ranks 2-5: q in chunks of ceil(8/4) = 2, k and v in
// chunks of ceil(2/4) = 1, so tp 2 and 3 get no k or v.
//   rank 2: q [0, 2) at 0-1, k 8 at 2, v 10 at 3 (local [4, 2])
//   rank 3: q [2, 4) at 0-1, k 9 at 2, v 11 at 3
//   rank 4: q [4, 6) at 0-1 (local [2, 2])
//   rank 5: q [6, 8) at 0-1

reshard.mesh @tp2 shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @tp4 shape = [4] axes = ["tp"] ranks = [2, 3, 4, 5]
reshard.redistribute @qkv from @tp2 <[[tp] blocks [8, 2, 2], []]>
    to @tp4 <[[tp] blocks [8, 2, 2], []]>
    : tensor<12x2xf16> -> tensor<12x2xf16>

// CHECK:      reshard.redistribute @qkv from @tp2
// CHECK-NEXT: reshard.pieces @qkv rank 2 holders {{\[\[}}0], [1]] [
// CHECK-NEXT:   box [0, 0] size [2, 2] from 0 at [0, 0] to 2 at [0, 0] group 0,
// CHECK-NEXT:   box [8, 0] size [1, 2] from 0 at [4, 0] to 2 at [2, 0] group 0,
// CHECK-NEXT:   box [10, 0] size [1, 2] from 0 at [5, 0] to 2 at [3, 0] group 0,
// CHECK-NEXT:   box [2, 0] size [2, 2] from 0 at [2, 0] to 3 at [0, 0] group 0,
// CHECK-NEXT:   box [9, 0] size [1, 2] from 1 at [4, 0] to 3 at [2, 0] group 1,
// CHECK-NEXT:   box [11, 0] size [1, 2] from 1 at [5, 0] to 3 at [3, 0] group 1,
// CHECK-NEXT:   box [4, 0] size [2, 2] from 1 at [0, 0] to 4 at [0, 0] group 1,
// CHECK-NEXT:   box [6, 0] size [2, 2] from 1 at [2, 0] to 5 at [0, 0] group 1{{$}}
// CHECK-NEXT: ]{{$}}
// CHECK-NOT:  reshard.pieces

// (4 + 4 + 2 + 2) x 2 destination elements.
// EXEC: checked 1 tensors, 8 pieces, 24 destination elements: all correct
