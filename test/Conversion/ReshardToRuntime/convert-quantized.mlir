// The lowering of a destination quantized on its senders: payload and
// scales are plain tensors of the plan (dtypes fp8e4m3 and fp32), and
// `quant_classes` / `quant_tensors` tell each holder how to quantize its
// bf16 source shard: block scaling, rank 2, blocks [2, 2], 2 source combos
// of one run of 2 rows and one of 4 columns; tensor 0 quantized from bf16
// (input 1) into tensor 1's scales. A holder's workspace is its staging
// (two 8-byte messages, 16-byte aligned: 32) plus its shard's scales (8
// bytes, aligned: 16; the fused pack quantizes the payload from the
// caller's shard, so no FP8 copy of it is held); a receiver's is its
// staging alone. The plan round-trips and re-verifies.

// RUN: reshard-opt %s --reshard-plan-pipeline | FileCheck %s
// RUN: reshard-opt %s --reshard-plan-pipeline | reshard-opt | FileCheck %s

// CHECK: reshard_rt.plan @reshard_plan num_ranks = 4 tensors = ["w", "w.scale"] dtypes = ["fp8e4m3", "fp32"]
// CHECK-SAME: quant_classes = [1, 0, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4] quant_tensors = [0, 1, 1, 0]
// CHECK: reshard_rt.class 0 element_bytes 1 rank 2 src combos [0, 1] shapes {{\[\[}}2, 4], [2, 4]]
// CHECK: reshard_rt.class 1 element_bytes 4 rank 2 src combos [0, 1] shapes {{\[\[}}1, 2], [1, 2]]
// CHECK: reshard_rt.rank 0 workspace = 48
// CHECK: reshard_rt.rank 1 workspace = 48
// CHECK: reshard_rt.rank 2 workspace = 32
// CHECK: reshard_rt.rank 3 workspace = 32

reshard.mesh @a shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @b shape = [2] axes = ["tp"] ranks = [2, 3]
reshard.redistribute @w from @a <[[tp], []]> to @b <[[], [tp]] quant block [2, 2]>
    : tensor<4x4xbf16> -> tensor<4x4xf8E4M3FN>
