// The lowering of a destination quantized on its receivers: the sources
// cut the 4-row blocks in two, so the payload moves at full precision (a
// class of 2-byte elements, though its dtype is fp8e4m3, what lands) and
// the scales are an identity on the destination mesh (group 1 from mesh 1
// to mesh 1) whose copy the runtime skips. The quant_classes row says
// side 1 and gives the runs of each destination combo: one of 4 rows and
// one of 2 columns. A receiver's workspace is its staging (two 8-byte
// messages, 16-byte aligned: 32) plus the shadow of its shard (4 x 2 bf16:
// 16); a sender's is its staging alone. The plan round-trips and
// re-verifies.

// RUN: reshard-opt %s --reshard-plan-pipeline | FileCheck %s
// RUN: reshard-opt %s --reshard-plan-pipeline | reshard-opt | FileCheck %s

// CHECK: reshard_rt.plan @reshard_plan num_ranks = 4 tensors = ["w", "w.scale"] dtypes = ["fp8e4m3", "fp32"]
// CHECK-SAME: quant_classes = [1, 1, 2, 4, 2, 2, 1, 4, 1, 2, 1, 4, 1, 2] quant_tensors = [0, 1, 1, 0]
// CHECK: reshard_rt.class 0 element_bytes 2 rank 2 src combos [0, 1] shapes {{\[\[}}2, 4], [2, 4]] dst combos [0, 1] shapes {{\[\[}}4, 2], [4, 2]]
// CHECK: reshard_rt.class 1 element_bytes 4 rank 2
// CHECK: reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
// CHECK: reshard_rt.group 1 class 1 from 1 to 1 tensors [1]
// CHECK: reshard_rt.rank 0 workspace = 32
// CHECK: reshard_rt.rank 1 workspace = 32
// CHECK: reshard_rt.rank 2 workspace = 48
// CHECK: reshard_rt.rank 3 workspace = 48

reshard.mesh @a shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @b shape = [2] axes = ["tp"] ranks = [2, 3]
reshard.redistribute @w from @a <[[tp], []]> to @b <[[], [tp]] quant block [4, 2]>
    : tensor<4x4xbf16> -> tensor<4x4xf8E4M3FN>
