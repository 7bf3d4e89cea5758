// reshard-quantize on destinations with a storage order (FlashInfer's
// [up; gate] w13, a short block stored first, MX along a reordered last
// dim): the scales' destination sharding is the payload's with every run
// divided by the block sizes (start / b, length rounded up), on the
// senders' side and, when a source cuts a block, on the receivers' too.
// Runs that cut a block are refused (reshard-quantize-invalid.mlir,
// ../invalid.mlir); the lit test test/Integration/mpi/quant.test runs such
// plans and checks every payload and scale element.

// RUN: reshard-opt %s --reshard-quantize | FileCheck %s
// RUN: reshard-opt %s --reshard-plan-pipeline | FileCheck %s --check-prefix=LOWERED

reshard.mesh @train shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @infer shape = [2, 2] axes = ["dp", "tp"] ranks = [2, 3, 4, 5]

// CHECK-LABEL: reshard.redistribute @w13 from @train
// CHECK-SAME: {quantize_on = "sender"}
// CHECK-NEXT: reshard.redistribute @w13.scale from @train <{{\[\[}}tp] blocks [2, 2], []]> to @infer <{{\[\[}}tp] order {{\[\[}}2, 2], [0, 2]] blocks [2, 2], []]>
// CHECK-SAME: : tensor<4x2xf32> -> tensor<4x2xf32> {scales_of = @w13}
reshard.redistribute @w13 from @train <[[tp] blocks [256, 256], []]>
    to @infer <[[tp] order [[256, 256], [0, 256]] blocks [256, 256], []] quant block [128, 128]>
    : tensor<512x256xbf16> -> tensor<512x256xf8E4M3FN>

// The receivers quantize (tp cuts 300 rows at 150): the scales stay on
// @infer, in the destination's order.
// CHECK-LABEL: reshard.redistribute @tail from @train
// CHECK-SAME: {quantize_on = "receiver"}
// CHECK-NEXT: reshard.redistribute @tail.scale from @infer <{{\[\[}}] order {{\[\[}}2, 1], [0, 2]], [tp]]> to @infer <{{\[\[}}] order {{\[\[}}2, 1], [0, 2]], [tp]]>
// CHECK-SAME: : tensor<3x2xf32> -> tensor<3x2xf32> {scales_of = @tail}
reshard.redistribute @tail from @train <[[tp], []]>
    to @infer <[[] order [[256, 44], [0, 256]], [tp]] quant block [128, 32]>
    : tensor<300x64xf16> -> tensor<300x64xf8E4M3FN>

// CHECK-LABEL: reshard.redistribute @mx from @train
// CHECK-SAME: {quantize_on = "sender"}
// CHECK-NEXT: reshard.redistribute @mx.scale from @train <{{\[\[}}tp], []]> to @infer <{{\[\[}}], [tp] order {{\[\[}}3, 1], [0, 3]]]>
// CHECK-SAME: : tensor<4x4xui8> -> tensor<4x4xui8> {scales_of = @mx}
reshard.redistribute @mx from @train <[[tp], []]>
    to @infer <[[], [tp] order [[96, 32], [0, 96]]] quant mx 32>
    : tensor<4x128xbf16> -> tensor<4x128xf8E4M3FN>

// The lowered plan quantizes the receivers' shards along runs of their
// own local order: each of @tail's 2 combos holds 300 rows as a run of 44
// (the short last block, stored first) and one of 256, and 32 columns.
// LOWERED: reshard_rt.plan @reshard_plan
// LOWERED-SAME: quant_classes = [{{.*}}1, 1, 2, 128, 32, 2, 2, 44, 256, 1, 32, 2, 44, 256, 1, 32,
