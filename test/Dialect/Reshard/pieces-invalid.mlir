// RUN: reshard-opt %s -split-input-file -verify-diagnostics

// Every error of reshard.pieces, one case per branch of the parser,
// PiecesOp::verify and PiecesOp::verifySymbolUses
// (lib/Dialect/Reshard/IR/PiecesOp.cpp). Branches that the custom syntax
// cannot reach (malformed holder_offsets, a row count that is not a multiple
// of the row width, a rank out of range after parsing) are written in the
// generic form. Each case quotes the distinctive part of its message.

//===----------------------------------------------------------------------===//
// Symbol uses
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'reshard.pieces' op tensor @missing is not a reshard.redistribute in this module}}
reshard.pieces @missing rank 2 holders [] []

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// A mesh is a symbol too, but not a tensor.
// expected-error @+1 {{'reshard.pieces' op tensor @mesh is not a reshard.redistribute in this module}}
reshard.pieces @mesh rank 1 holders [] []

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @rank_differs from @mesh <[[tp], []]> to @mesh <[[], []]>
    : tensor<4x2xf32> -> tensor<4x2xf32>
// expected-error @+1 {{'reshard.pieces' op rank 1 differs from the rank 2 of tensor @rank_differs}}
reshard.pieces @rank_differs rank 1 holders [] []

// -----

//===----------------------------------------------------------------------===//
// Parser
//===----------------------------------------------------------------------===//

// expected-error @+1 {{tensor rank must be in [0, 64]}}
reshard.pieces @rank_too_large rank 65 holders [] []

// -----

// expected-error @+1 {{tensor rank must be in [0, 64]}}
reshard.pieces @rank_negative rank -1 holders [] []

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @box_values from @mesh <[[tp], []]> to @mesh <[[], []]>
    : tensor<4x2xf32> -> tensor<4x2xf32>
// expected-error @+1 {{a piece of a rank-2 tensor needs 2 values per offset and size}}
reshard.pieces @box_values rank 2 holders [[0]] [box [0] size [2, 2] from 0 at [0, 0] to 0 at [0, 0] group 0]

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @size_values from @mesh <[[tp], []]> to @mesh <[[], []]>
    : tensor<4x2xf32> -> tensor<4x2xf32>
// expected-error @+1 {{a piece of a rank-2 tensor needs 2 values per offset and size}}
reshard.pieces @size_values rank 2 holders [[0]] [box [0, 0] size [2, 2, 1] from 0 at [0, 0] to 0 at [0, 0] group 0]

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @src_offset_values from @mesh <[[tp], []]> to @mesh <[[], []]>
    : tensor<4x2xf32> -> tensor<4x2xf32>
// expected-error @+1 {{a piece of a rank-2 tensor needs 2 values per offset and size}}
reshard.pieces @src_offset_values rank 2 holders [[0]] [box [0, 0] size [2, 2] from 0 at [] to 0 at [0, 0] group 0]

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @dst_offset_values from @mesh <[[tp], []]> to @mesh <[[], []]>
    : tensor<4x2xf32> -> tensor<4x2xf32>
// The second piece is the bad one: the error points at it.
// expected-error @+3 {{a piece of a rank-2 tensor needs 2 values per offset and size}}
reshard.pieces @dst_offset_values rank 2 holders [[0]] [
  box [0, 0] size [2, 2] from 0 at [0, 0] to 0 at [0, 0] group 0,
  box [2, 0] size [2, 2] from 0 at [2, 0] to 0 at [2] group 0
]

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @scalar_values from @mesh <[]> to @mesh <[]>
    : tensor<f32> -> tensor<f32>
// expected-error @+1 {{a piece of a rank-0 tensor needs 0 values per offset and size}}
reshard.pieces @scalar_values rank 0 holders [[0]] [box [0] size [] from 0 at [] to 1 at [] group 0]

// -----

//===----------------------------------------------------------------------===//
// Verifier
//===----------------------------------------------------------------------===//

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op rank 65 must be in [0, 64]}}
"reshard.pieces"() {tensor = @w, rank = 65 : i64,
    holder_offsets = array<i64: 0>, holder_ranks = array<i64>,
    rows = array<i64>} : () -> ()

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op rank -1 must be in [0, 64]}}
"reshard.pieces"() {tensor = @w, rank = -1 : i64,
    holder_offsets = array<i64: 0>, holder_ranks = array<i64>,
    rows = array<i64>} : () -> ()

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op holder_offsets must start at 0 and end at the number of holder ranks}}
"reshard.pieces"() {tensor = @w, rank = 1 : i64,
    holder_offsets = array<i64>, holder_ranks = array<i64>,
    rows = array<i64>} : () -> ()

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op holder_offsets must start at 0 and end at the number of holder ranks}}
"reshard.pieces"() {tensor = @w, rank = 1 : i64,
    holder_offsets = array<i64: 1, 2>, holder_ranks = array<i64: 0, 1>,
    rows = array<i64>} : () -> ()

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op holder_offsets must start at 0 and end at the number of holder ranks}}
"reshard.pieces"() {tensor = @w, rank = 1 : i64,
    holder_offsets = array<i64: 0, 1>, holder_ranks = array<i64: 0, 1>,
    rows = array<i64>} : () -> ()

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @empty_holder_group from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op holder group 1 is empty}}
reshard.pieces @empty_holder_group rank 1 holders [[0], [], [1]] []

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// Offsets that go backwards make a group of negative size.
// expected-error @+1 {{'reshard.pieces' op holder_offsets must not decrease}}
"reshard.pieces"() {tensor = @w, rank = 1 : i64,
    holder_offsets = array<i64: 0, 2, 1, 2>, holder_ranks = array<i64: 0, 1>,
    rows = array<i64>} : () -> ()

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp], []]> to @mesh <[[], []]>
    : tensor<4x2xf32> -> tensor<4x2xf32>
// Rank 2: 5 + 4 * 2 = 13 integers per row; 10 are given.
// expected-error @+1 {{'reshard.pieces' op rows hold 10 integers, not a multiple of the row width 13 of a rank-2 tensor}}
"reshard.pieces"() {tensor = @w, rank = 2 : i64,
    holder_offsets = array<i64: 0, 1>, holder_ranks = array<i64: 0>,
    rows = array<i64: 0, 0, 0, 0, 0, 2, 2, 0, 0, 0>} : () -> ()

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @group_out_of_range from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op piece 1 refers to holder group 2 of 2}}
reshard.pieces @group_out_of_range rank 1 holders [[0], [1]] [
  box [0] size [2] from 0 at [0] to 1 at [0] group 0,
  box [2] size [2] from 1 at [0] to 1 at [2] group 2
]

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @group_negative from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op piece 0 refers to holder group -1 of 1}}
reshard.pieces @group_negative rank 1 holders [[0]] [
  box [0] size [2] from 0 at [0] to 1 at [0] group -1
]

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @no_holder_groups from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// A piece needs a holder group; a table without groups can have no pieces.
// expected-error @+1 {{'reshard.pieces' op piece 0 refers to holder group 0 of 0}}
reshard.pieces @no_holder_groups rank 1 holders [] [
  box [0] size [2] from 0 at [0] to 1 at [0] group 0
]

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op holder group 0 must list distinct ranks in ascending order}}
reshard.pieces @w rank 1 holders [[1, 0]] []

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op holder group 0 must list distinct ranks in ascending order}}
reshard.pieces @w rank 1 holders [[0, 0], [1]] []

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op piece 0 has an empty box}}
reshard.pieces @w rank 1 holders [[0]] [
  box [0] size [0] from 0 at [0] to 1 at [0] group 0
]

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op piece 0 has a negative offset}}
reshard.pieces @w rank 1 holders [[0]] [
  box [0] size [2] from 0 at [-1] to 1 at [0] group 0
]

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op piece 0 has via 1; use -1 (direct) or another destination rank}}
reshard.pieces @w rank 1 holders [[0]] [
  box [0] size [2] from 0 at [0] to 1 at [0] group 0 via 1
]

// -----

reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
// expected-error @+1 {{'reshard.pieces' op piece 0 has negative step -2}}
reshard.pieces @w rank 1 holders [[0]] [
  box [0] size [2] from 0 at [0] to 1 at [0] group 0 step -2
]

// -----

// A module is intersected from its layout alone: the pass refuses tables
// already there (reshard-run refuses a second table for one tensor, in
// test/Tools/reshard-run/errors.test).
// RUN: not reshard-opt %s --split-input-file --reshard-intersect 2>&1 | FileCheck %s --check-prefix=TWICE
reshard.mesh @mesh shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @two_tables from @mesh <[[tp]]> to @mesh <[[]]>
    : tensor<4xf32> -> tensor<4xf32>
reshard.pieces @two_tables rank 1 holders [] []
reshard.pieces @two_tables rank 1 holders [] []
// TWICE: error: 'reshard.pieces' op is already here: reshard-intersect plans a module once, from its layout alone
