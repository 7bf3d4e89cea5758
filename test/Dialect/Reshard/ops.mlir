// RUN: reshard-opt %s | reshard-opt | FileCheck %s
// RUN: reshard-opt %s --mlir-print-op-generic | reshard-opt | FileCheck %s

// Round trip of every reshard op and attribute form, in custom and generic
// syntax: meshes from 0-D to 4-D (a 1-device mesh, shared, disjoint and
// partly overlapping rank sets), topologies with and without the optional
// latencies, and redistributions covering several axes on one dim, several
// sharded dims, replication, blocks, storage orders, 0-D and zero-size tensors, uneven
// sizes, every supported element type, and names that need quoting. The
// printed forms are what later passes and the Python front end rely on.
// There is no func dialect here: every op is a module-level symbol, so each
// op line is checked with CHECK (and CHECK-SAME for the long ones; `{{$}}`
// pins the end of the line). `[[` opens a FileCheck variable, hence the
// `{{\[\[}}` in the patterns.

// Meshes. @train and @colocated hold the same ranks in another order,
// @infer is disjoint from @train, @"mesh-4d" overlaps both partly.

// CHECK: reshard.mesh @train shape = [2, 4] axes = ["dp", "tp"] ranks = [0, 1, 2, 3, 4, 5, 6, 7]
reshard.mesh @train shape = [2, 4] axes = ["dp", "tp"]
    ranks = [0, 1, 2, 3, 4, 5, 6, 7]
// CHECK: reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [8, 9]
reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [8, 9]
// CHECK: reshard.mesh @colocated shape = [2, 2, 2] axes = ["pp", "dp", "tp"] ranks = [7, 6, 5, 4, 3, 2, 1, 0]
reshard.mesh @colocated shape = [2, 2, 2] axes = ["pp", "dp", "tp"]
    ranks = [7, 6, 5, 4, 3, 2, 1, 0]
// CHECK: reshard.mesh @"mesh-4d" shape = [1, 2, 1, 3] axes = ["a", "my-axis", "b.c", "my axis"] ranks = [4, 5, 6, 7, 8, 9]
reshard.mesh @"mesh-4d" shape = [1, 2, 1, 3]
    axes = ["a", "my-axis", "b.c", "my axis"] ranks = [4, 5, 6, 7, 8, 9]
// One device, holding the largest rank a mesh may list.
// CHECK: reshard.mesh @single shape = [1] axes = ["x"] ranks = [2147483646]
reshard.mesh @single shape = [1] axes = ["x"] ranks = [2147483646]
// A 0-D mesh is one device with no axes.
// CHECK: reshard.mesh @scalar shape = [] axes = [] ranks = [3]
reshard.mesh @scalar shape = [] axes = [] ranks = [3]

// Topologies. Latencies equal to their defaults (1 us, 5 us) are not printed.

// CHECK: reshard.topology @dgx_h100 gpus_per_node = 8 nvl_domain_size = 8
// CHECK-SAME: nvlink_GBps_per_gpu = 4.500000e+02 nic_GBps_per_gpu = 5.000000e+01{{$}}
reshard.topology @dgx_h100 gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
// CHECK: reshard.topology @gb200_nvl72 gpus_per_node = 4 nvl_domain_size = 72
// CHECK-SAME: nvlink_GBps_per_gpu = 9.000000e+02 nic_GBps_per_gpu = 1.000000e+02
// CHECK-SAME: nvlink_latency_us = 5.000000e-01 nic_latency_us = 1.000000e+01{{$}}
reshard.topology @gb200_nvl72 gpus_per_node = 4 nvl_domain_size = 72
    nvlink_GBps_per_gpu = 900.0 nic_GBps_per_gpu = 100.0
    nvlink_latency_us = 0.5 nic_latency_us = 10.0
// CHECK: reshard.topology @nvlink_latency_only gpus_per_node = 2 nvl_domain_size = 2
// CHECK-SAME: nvlink_GBps_per_gpu = 1.000000e+00 nic_GBps_per_gpu = 2.500000e-01
// CHECK-SAME: nvlink_latency_us = 0.000000e+00{{$}}
reshard.topology @nvlink_latency_only gpus_per_node = 2 nvl_domain_size = 2
    nvlink_GBps_per_gpu = 1.0 nic_GBps_per_gpu = 0.25 nvlink_latency_us = 0.0
// CHECK: reshard.topology @nic_latency_only gpus_per_node = 1 nvl_domain_size = 3
// CHECK-SAME: nvlink_GBps_per_gpu = 1.000000e+00 nic_GBps_per_gpu = 1.000000e+00
// CHECK-SAME: nic_latency_us = 0.000000e+00{{$}}
reshard.topology @nic_latency_only gpus_per_node = 1 nvl_domain_size = 3
    nvlink_GBps_per_gpu = 1.0 nic_GBps_per_gpu = 1.0 nic_latency_us = 0.0
// CHECK: reshard.topology @explicit_defaults gpus_per_node = 8 nvl_domain_size = 16
// CHECK-SAME: nvlink_GBps_per_gpu = 4.500000e+02 nic_GBps_per_gpu = 5.000000e+01{{$}}
reshard.topology @explicit_defaults gpus_per_node = 8 nvl_domain_size = 16
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
    nvlink_latency_us = 1.0 nic_latency_us = 5.0

// Redistributions, one per element type. Tensor names with dots print
// without quotes; names with other punctuation keep them.

// Several axes on one dim, into a disjoint mesh.
// CHECK: reshard.redistribute @model.embed_tokens.weight
// CHECK-SAME: from @train <{{\[\[}}dp, tp], []]> to @infer <{{\[\[}}tp], []]>
// CHECK-SAME: topology @dgx_h100 : tensor<64x32xbf16> -> tensor<64x32xbf16>{{$}}
reshard.redistribute @"model.embed_tokens.weight"
    from @train <[[dp, tp], []]> to @infer <[[tp], []]> topology @dgx_h100
    : tensor<64x32xbf16> -> tensor<64x32xbf16>

// Blocks with axes (fused q/k/v), uneven: 6 rows of k over tp = 4.
// CHECK: reshard.redistribute @model.layers.0.self_attn.qkv_proj.weight
// CHECK-SAME: from @train <{{\[\[}}tp] blocks [32, 6, 6], []]>
// CHECK-SAME: to @infer <{{\[\[}}tp] blocks [32, 6, 6], []]>
// CHECK-SAME: topology @gb200_nvl72 : tensor<44x32xf16> -> tensor<44x32xf16>{{$}}
reshard.redistribute @"model.layers.0.self_attn.qkv_proj.weight"
    from @train <[[tp] blocks [32, 6, 6], []]>
    to @infer <[[tp] blocks [32, 6, 6], []]> topology @gb200_nvl72
    : tensor<44x32xf16> -> tensor<44x32xf16>

// Storage orders: Megatron's per-group q/k/v interleave on the source (an
// empty run kept as written), [up; gate] with blocks on the destination.
// CHECK: reshard.redistribute @megatron.linear_qkv
// CHECK-SAME: from @train <{{\[\[}}tp] order {{\[\[}}0, 16], [32, 6], [38, 0], [16, 16], [38, 6]], []]>
// CHECK-SAME: to @infer <{{\[\[}}tp] order {{\[\[}}22, 22], [0, 22]] blocks [22, 22], []]>
// CHECK-SAME: : tensor<44x32xbf16> -> tensor<44x32xbf16>{{$}}
reshard.redistribute @megatron.linear_qkv
    from @train <[[tp] order [[0, 16], [32, 6], [38, 0], [16, 16], [38, 6]], []]>
    to @infer <[[tp] order [[22, 22], [0, 22]] blocks [22, 22], []]>
    : tensor<44x32xbf16> -> tensor<44x32xbf16>

// Dim orders: gpt-oss's w13 as [gate/up, f, h], stored by Megatron as
// [gate; up] per tensor-parallel rank and by vLLM interleaved (its f rows
// outermost); the identity spelt out prints as written.
// CHECK: reshard.redistribute @gpt_oss.w13
// CHECK-SAME: from @train <{{\[\[}}], [tp], []] dim_order [0, 1, 2]>
// CHECK-SAME: to @infer <{{\[\[}}], [tp], []] dim_order [1, 0, 2]>
reshard.redistribute @gpt_oss.w13
    from @train <[[], [tp], []] dim_order [0, 1, 2]>
    to @infer <[[], [tp], []] dim_order [1, 0, 2]>
    : tensor<2x22x32xbf16> -> tensor<2x22x32xbf16>

// Quantized destinations: FP8 payload with per-block fp32 scales ([128, 128]
// blocks, every shard boundary a multiple), and MXFP8 (E8M0 scales per 32
// elements of the last dim). The source keeps its own element type.
// CHECK: reshard.redistribute @quant.block
// CHECK-SAME: from @train <{{\[\[}}tp], []]> to @infer <{{\[\[}}], [tp]] quant block [128, 128]>
// CHECK-SAME: : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>{{$}}
reshard.redistribute @quant.block
    from @train <[[tp], []]> to @infer <[[], [tp]] quant block [128, 128]>
    : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>

// The same blocks with power-of-two scales (`ue8m0`).
// CHECK: reshard.redistribute @quant.ue8m0
// CHECK-SAME: from @train <{{\[\[}}tp], []]> to @infer <{{\[\[}}], [tp]] quant block [128, 128] ue8m0>
reshard.redistribute @quant.ue8m0
    from @train <[[tp], []]> to @infer <[[], [tp]] quant block [128, 128] ue8m0>
    : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>

// CHECK: reshard.redistribute @quant.mx
// CHECK-SAME: from @train <{{\[\[}}], [tp]]> to @infer <{{\[\[}}tp], []] quant mx 32>
// CHECK-SAME: : tensor<4x64xf32> -> tensor<4x64xf8E4M3FN>{{$}}
reshard.redistribute @quant.mx
    from @train <[[], [tp]]> to @infer <[[tp], []] quant mx 32>
    : tensor<4x64xf32> -> tensor<4x64xf8E4M3FN>

// Several sharded dims, onto a mesh that shares every rank.
// CHECK: reshard.redistribute @model.layers.0.mlp.gate_up_proj.weight
// CHECK-SAME: from @train <{{\[\[}}dp], [tp]]> to @colocated <{{\[\[}}tp], [pp, dp]]>
// CHECK-SAME: : tensor<16x8xf32> -> tensor<16x8xf32>{{$}}
reshard.redistribute @model.layers.0.mlp.gate_up_proj.weight
    from @train <[[dp], [tp]]> to @colocated <[[tp], [pp, dp]]>
    : tensor<16x8xf32> -> tensor<16x8xf32>

// Full replication on both sides.
// CHECK: reshard.redistribute @model.norm.weight
// CHECK-SAME: from @train <{{\[\[}}], []]> to @colocated <{{\[\[}}], []]>
// CHECK-SAME: topology @nvlink_latency_only : tensor<3x5xf64> -> tensor<3x5xf64>{{$}}
reshard.redistribute @model.norm.weight
    from @train <[[], []]> to @colocated <[[], []]> topology @nvlink_latency_only
    : tensor<3x5xf64> -> tensor<3x5xf64>

// A 0-D tensor, from a 0-D mesh to a 2-D one.
// CHECK: reshard.redistribute @step from @scalar <[]> to @train <[]>
// CHECK-SAME: : tensor<f32> -> tensor<f32>{{$}}
reshard.redistribute @step from @scalar <[]> to @train <[]>
    : tensor<f32> -> tensor<f32>

// Zero-size dims, sharded and blocked.
// CHECK: reshard.redistribute @empty.rows from @train <{{\[\[}}tp], [dp]]>
// CHECK-SAME: to @infer <{{\[\[}}], [tp]]> : tensor<0x8xi8> -> tensor<0x8xi8>{{$}}
reshard.redistribute @empty.rows from @train <[[tp], [dp]]> to @infer <[[], [tp]]>
    : tensor<0x8xi8> -> tensor<0x8xi8>
// CHECK: reshard.redistribute @empty.blocks from @infer <{{\[\[}}], [tp] blocks [0, 0]]>
// CHECK-SAME: to @infer <{{\[\[}}tp], []]> : tensor<4x0xui8> -> tensor<4x0xui8>{{$}}
reshard.redistribute @empty.blocks from @infer <[[], [tp] blocks [0, 0]]>
    to @infer <[[tp], []]> : tensor<4x0xui8> -> tensor<4x0xui8>

// Axis names that need quotes, a 5-D tensor on the 4-D mesh, and a
// tensor name that needs quotes.
// CHECK: reshard.redistribute @"lm_head/weight:0"
// CHECK-SAME: from @"mesh-4d" <{{\[\[}}a], ["my-axis"], [], [b.c, "my axis"], []]>
// CHECK-SAME: to @single <{{\[\[}}], [], [x], [], []]>
// CHECK-SAME: : tensor<1x2x3x4x5xsi8> -> tensor<1x2x3x4x5xsi8>{{$}}
reshard.redistribute @"lm_head/weight:0"
    from @"mesh-4d" <[[a], ["my-axis"], [], ["b.c", "my axis"], []]>
    to @single <[[], [], [x], [], []]>
    : tensor<1x2x3x4x5xsi8> -> tensor<1x2x3x4x5xsi8>

// Blocks on a dim that no axis splits; a 1-device mesh; uneven 7 over 3.
// CHECK: reshard.redistribute @blocks.unsharded from @"mesh-4d" <{{\[\[}}"my axis"], [] blocks [3, 4]]>
// CHECK-SAME: to @single <{{\[\[}}] blocks [1, 0, 6], [x]]> : tensor<7x7xi16> -> tensor<7x7xi16>{{$}}
reshard.redistribute @blocks.unsharded
    from @"mesh-4d" <[["my axis"], [] blocks [3, 4]]>
    to @single <[[] blocks [1, 0, 6], [x]]> : tensor<7x7xi16> -> tensor<7x7xi16>

// Same mesh and sharding on both sides.
// CHECK: reshard.redistribute @same from @colocated <{{\[\[}}pp, dp, tp]]>
// CHECK-SAME: to @colocated <{{\[\[}}pp, dp, tp]]> : tensor<8xui16> -> tensor<8xui16>{{$}}
reshard.redistribute @same from @colocated <[[pp, dp, tp]]>
    to @colocated <[[pp, dp, tp]]> : tensor<8xui16> -> tensor<8xui16>

// The remaining element types.
// CHECK: reshard.redistribute @t.si16 from @infer <{{\[\[}}tp]]> to @train <{{\[\[}}dp]]>
// CHECK-SAME: : tensor<3xsi16> -> tensor<3xsi16>{{$}}
reshard.redistribute @t.si16 from @infer <[[tp]]> to @train <[[dp]]>
    : tensor<3xsi16> -> tensor<3xsi16>
// CHECK: reshard.redistribute @t.i32 from @infer <{{\[\[}}tp]]> to @train <{{\[\[}}tp, dp]]>
// CHECK-SAME: topology @nic_latency_only : tensor<9xi32> -> tensor<9xi32>{{$}}
reshard.redistribute @t.i32 from @infer <[[tp]]> to @train <[[tp, dp]]>
    topology @nic_latency_only : tensor<9xi32> -> tensor<9xi32>
// CHECK: reshard.redistribute @t.ui32 from @infer <{{\[\[}}tp]]> to @train <{{\[\[}}dp]]>
// CHECK-SAME: : tensor<3xui32> -> tensor<3xui32>{{$}}
reshard.redistribute @t.ui32 from @infer <[[tp]]> to @train <[[dp]]>
    : tensor<3xui32> -> tensor<3xui32>
// CHECK: reshard.redistribute @t.si32 from @infer <{{\[\[}}tp]]> to @train <{{\[\[}}dp]]>
// CHECK-SAME: : tensor<3xsi32> -> tensor<3xsi32>{{$}}
reshard.redistribute @t.si32 from @infer <[[tp]]> to @train <[[dp]]>
    : tensor<3xsi32> -> tensor<3xsi32>
// CHECK: reshard.redistribute @t.i64 from @infer <{{\[\[}}tp]]> to @train <{{\[\[}}dp]]>
// CHECK-SAME: topology @explicit_defaults : tensor<3xi64> -> tensor<3xi64>{{$}}
reshard.redistribute @t.i64 from @infer <[[tp]]> to @train <[[dp]]>
    topology @explicit_defaults : tensor<3xi64> -> tensor<3xi64>
// CHECK: reshard.redistribute @t.ui64 from @infer <{{\[\[}}tp]]> to @train <{{\[\[}}dp]]>
// CHECK-SAME: : tensor<3xui64> -> tensor<3xui64>{{$}}
reshard.redistribute @t.ui64 from @infer <[[tp]]> to @train <[[dp]]>
    : tensor<3xui64> -> tensor<3xui64>
// CHECK: reshard.redistribute @t.si64 from @infer <{{\[\[}}tp]]> to @train <{{\[\[}}dp]]>
// CHECK-SAME: : tensor<3xsi64> -> tensor<3xsi64>{{$}}
reshard.redistribute @t.si64 from @infer <[[tp]]> to @train <[[dp]]>
    : tensor<3xsi64> -> tensor<3xsi64>
// CHECK: reshard.redistribute @t.f8E4M3FN from @train <{{\[\[}}tp] blocks [2, 2]]>
// CHECK-SAME: to @infer <{{\[\[}}tp] blocks [2, 2]]> : tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>{{$}}
reshard.redistribute @t.f8E4M3FN from @train <[[tp] blocks [2, 2]]>
    to @infer <[[tp] blocks [2, 2]]> : tensor<4xf8E4M3FN> -> tensor<4xf8E4M3FN>
// CHECK: reshard.redistribute @t.f8E5M2 from @train <{{\[\[}}]]> to @infer <{{\[\[}}tp]]>
// CHECK-SAME: : tensor<4xf8E5M2> -> tensor<4xf8E5M2>{{$}}
reshard.redistribute @t.f8E5M2 from @train <[[]]> to @infer <[[tp]]>
    : tensor<4xf8E5M2> -> tensor<4xf8E5M2>

// The sharding attributes on their own, in the attribute dictionary.
// CHECK: reshard.redistribute @t.attrs from @single <{{\[\[}}x]]> to @single <{{\[\[}}x]]>
// CHECK-SAME: : tensor<2xi8> -> tensor<2xi8>
// CHECK-SAME: {dim = #reshard.dim_sharding<["my-axis", b.c] blocks [1, 2]>,
// CHECK-SAME: empty_dim = #reshard.dim_sharding<[]>,
// CHECK-SAME: sharding = #reshard.sharding<{{\[\[}}tp] blocks [8, 2, 2], []]>,
// CHECK-SAME: sharding_0d = #reshard.sharding<[]>}{{$}}
reshard.redistribute @t.attrs from @single <[[x]]> to @single <[[x]]>
    : tensor<2xi8> -> tensor<2xi8> {
      sharding = #reshard.sharding<[[tp] blocks [8, 2, 2], []]>,
      sharding_0d = #reshard.sharding<[]>,
      dim = #reshard.dim_sharding<["my-axis", "b.c"] blocks [1, 2]>,
      empty_dim = #reshard.dim_sharding<[]>}
