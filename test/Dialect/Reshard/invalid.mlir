// RUN: reshard-opt %s -split-input-file -verify-diagnostics

// Every error of the reshard dialect that IR can reach, one case per
// verifier branch (lib/Dialect/Reshard/IR/ReshardOps.cpp and the shared
// checks of lib/Layout/Layout.cpp), plus the parse errors of the sharding
// syntax and the symbol-table errors a model file can run into. The
// offending symbol is named after the failure. A message must say what is
// wrong and what would be right, so each case quotes its distinctive part;
// errors found while resolving a sharding carry a note at the mesh.

//===----------------------------------------------------------------------===//
// reshard.mesh
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'reshard.mesh' op axes: the mesh has 2 axis sizes but 1 axis names; give one name per axis}}
reshard.mesh @axis_count_mismatch shape = [2, 2] axes = ["tp"] ranks = [0, 1, 2, 3]

// -----

// expected-error @+1 {{axes[1]: axis name is empty}}
reshard.mesh @empty_axis_name shape = [2, 2] axes = ["dp", ""] ranks = [0, 1, 2, 3]

// -----

// expected-error @+1 {{axes[2]: axis name 'tp' is used twice (also axes[0]); axis names must be unique}}
reshard.mesh @duplicate_axis_name shape = [2, 2, 2] axes = ["tp", "dp", "tp"]
    ranks = [0, 1, 2, 3, 4, 5, 6, 7]

// -----

// expected-error @+1 {{shape[1]: mesh axis size 0 must be positive}}
reshard.mesh @zero_axis_size shape = [2, 0] axes = ["dp", "tp"] ranks = []

// -----

// expected-error @+1 {{shape[0]: mesh axis size -2 must be positive}}
reshard.mesh @negative_axis_size shape = [-2] axes = ["tp"] ranks = [0, 1]

// -----

// 2^32 devices: more than a C int can number.
// expected-error @+1 {{shape: the mesh has more than 2147483647 devices}}
reshard.mesh @too_many_devices shape = [65536, 65536] axes = ["dp", "tp"] ranks = [0]

// -----

// The device count itself overflows 64 bits.
// expected-error @+1 {{shape: the mesh has more than 2147483647 devices}}
reshard.mesh @device_count_overflow shape = [4611686018427387904, 4]
    axes = ["dp", "tp"] ranks = [0]

// -----

// expected-error @+1 {{ranks: the mesh shape has 4 device(s) but 3 rank(s) are listed; list one global rank per device in row-major order}}
reshard.mesh @rank_count_mismatch shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2]

// -----

// A 0-D mesh is one device and lists one rank.
// expected-error @+1 {{ranks: the mesh shape has 1 device(s) but 0 rank(s) are listed}}
reshard.mesh @scalar_mesh_without_rank shape = [] axes = [] ranks = []

// -----

// expected-error @+1 {{ranks[1]: rank -1 is out of range; ranks must be in [0, 2147483646] (the communicator, largest rank + 1, is a C int)}}
reshard.mesh @negative_rank shape = [2] axes = ["tp"] ranks = [0, -1]

// -----

// expected-error @+1 {{ranks[0]: rank 2147483647 is out of range; ranks must be in [0, 2147483646] (the communicator, largest rank + 1, is a C int)}}
reshard.mesh @rank_too_large shape = [2] axes = ["tp"] ranks = [2147483647, 0]

// -----

// expected-error @+1 {{ranks[3]: rank 1 appears twice (also ranks[1]); a device belongs to a mesh once}}
reshard.mesh @duplicate_rank shape = [4] axes = ["tp"] ranks = [0, 1, 2, 1]

// -----

// Every problem of a mesh is reported, not only the first.
// expected-error @+2 {{axes[1]: axis name 'tp' is used twice (also axes[0])}}
// expected-error @+1 {{ranks[1]: rank 0 appears twice (also ranks[0])}}
reshard.mesh @several_mesh_errors shape = [1, 2] axes = ["tp", "tp"] ranks = [0, 0]

//===----------------------------------------------------------------------===//
// reshard.topology
//===----------------------------------------------------------------------===//

// -----

// expected-error @+1 {{'reshard.topology' op gpus_per_node: GPUs per node must be positive, got 0}}
reshard.topology @zero_gpus_per_node gpus_per_node = 0 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0

// -----

// expected-error @+1 {{nvl_domain_size: NVLink domain size must be positive, got -8}}
reshard.topology @negative_domain gpus_per_node = 8 nvl_domain_size = -8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0

// -----

// expected-error @+1 {{nvl_domain_size: NVLink domain size 12 is not a multiple of gpus_per_node 8; a domain holds whole nodes}}
reshard.topology @domain_not_whole_nodes gpus_per_node = 8 nvl_domain_size = 12
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0

// -----

// A domain smaller than a node is not a whole number of nodes either.
// expected-error @+1 {{nvl_domain_size: NVLink domain size 4 is not a multiple of gpus_per_node 8}}
reshard.topology @domain_smaller_than_node gpus_per_node = 8 nvl_domain_size = 4
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0

// -----

// expected-error @+1 {{nvlink_GBps_per_gpu: bandwidth must be positive and finite}}
reshard.topology @zero_nvlink_bandwidth gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 0.0 nic_GBps_per_gpu = 50.0

// -----

// expected-error @+1 {{nic_GBps_per_gpu: bandwidth must be positive and finite}}
reshard.topology @negative_nic_bandwidth gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = -50.0

// -----

// NaN, written as its IEEE bit pattern.
// expected-error @+1 {{nvlink_GBps_per_gpu: bandwidth must be positive and finite}}
reshard.topology @nan_bandwidth gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 0x7FF8000000000000 nic_GBps_per_gpu = 50.0

// -----

// +inf.
// expected-error @+1 {{nic_GBps_per_gpu: bandwidth must be positive and finite}}
reshard.topology @infinite_bandwidth gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 0x7FF0000000000000

// -----

// expected-error @+1 {{nvlink_latency_us: latency must be non-negative and finite}}
reshard.topology @negative_latency gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0 nvlink_latency_us = -1.0

// -----

// +inf.
// expected-error @+1 {{nic_latency_us: latency must be non-negative and finite}}
reshard.topology @infinite_latency gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
    nic_latency_us = 0x7FF0000000000000

// -----

// NaN.
// expected-error @+1 {{nic_latency_us: latency must be non-negative and finite}}
reshard.topology @nan_latency gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
    nic_latency_us = 0x7FF8000000000000

// -----

// Positive and finite, but so slow that modelled times overflow to inf (a
// subnormal bandwidth gave reports of inf and NaN), or so fast no link is.
// expected-error @+2 {{nic_GBps_per_gpu: bandwidth 1e-09 GB/s is outside [1e-06, 1e+09] GB/s, where the cost model's times stay finite}}
// expected-error @+1 {{nvlink_GBps_per_gpu: bandwidth 2e+09 GB/s is outside [1e-06, 1e+09] GB/s}}
reshard.topology @subnormal_bandwidth gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 2.0e9 nic_GBps_per_gpu = 1.0e-9

// -----

// A latency is 0 or within the range where times stay finite.
// expected-error @+2 {{nic_latency_us: latency 1e-09 us is neither 0 nor in [1e-06, 1e+09] us, where the cost model's times stay finite}}
// expected-error @+1 {{nvlink_latency_us: latency 1.7e+308 us is neither 0 nor in [1e-06, 1e+09] us}}
reshard.topology @extreme_latencies gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
    nvlink_latency_us = 1.7e308 nic_latency_us = 1.0e-9

// -----

// Every problem of a topology is reported, not only the first.
// expected-error @+3 {{gpus_per_node: GPUs per node must be positive}}
// expected-error @+2 {{nic_GBps_per_gpu: bandwidth must be positive and finite}}
// expected-error @+1 {{nvlink_latency_us: latency must be non-negative and finite}}
reshard.topology @several_topology_errors gpus_per_node = -1 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 0.0 nvlink_latency_us = -0.5

//===----------------------------------------------------------------------===//
// reshard.redistribute: tensor types
//===----------------------------------------------------------------------===//

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{'reshard.redistribute' op src_type dim 0 is dynamic; a redistribution needs a static global shape}}
reshard.redistribute @dynamic_src_dim from @m <[[tp], []]> to @m <[[tp], []]>
    : tensor<?x4xf32> -> tensor<?x4xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{dst_type dim 1 is dynamic; a redistribution needs a static global shape}}
reshard.redistribute @dynamic_dst_dim from @m <[[tp], []]> to @m <[[tp], []]>
    : tensor<8x4xf32> -> tensor<8x?xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_type element type 'i1' cannot be redistributed; use bf16, f16, f32, f64, f8E4M3FN, f8E5M2, or an 8/16/32/64-bit integer}}
reshard.redistribute @i1_elements from @m <[[tp]]> to @m <[[tp]]>
    : tensor<8xi1> -> tensor<8xi1>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_type element type 'f80' cannot be redistributed}}
reshard.redistribute @f80_elements from @m <[[tp]]> to @m <[[tp]]>
    : tensor<8xf80> -> tensor<8xf80>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_type element type 'complex<f32>' cannot be redistributed}}
reshard.redistribute @complex_elements from @m <[[tp]]> to @m <[[tp]]>
    : tensor<8xcomplex<f32>> -> tensor<8xcomplex<f32>>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_type element type 'index' cannot be redistributed}}
reshard.redistribute @index_elements from @m <[[tp]]> to @m <[[tp]]>
    : tensor<8xindex> -> tensor<8xindex>

// -----

// An fp8 variant other than the two supported ones.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_type element type 'f8E4M3FNUZ' cannot be redistributed}}
reshard.redistribute @fp8_fnuz_elements from @m <[[tp]]> to @m <[[tp]]>
    : tensor<8xf8E4M3FNUZ> -> tensor<8xf8E4M3FNUZ>

// -----

// The destination type is checked on its own too.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{dst_type element type 'i4' cannot be redistributed}}
reshard.redistribute @i4_dst_elements from @m <[[tp]]> to @m <[[tp]]>
    : tensor<8xi8> -> tensor<8xi4>

// -----

// 2^61 f32 elements are 2^63 bytes.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_type.shape: the tensor's byte size (product of its non-zero dims times the element size) overflows 64 bits; it must stay below 2^63 bytes}}
reshard.redistribute @byte_size_overflow from @m <[[tp]]> to @m <[[tp]]>
    : tensor<2305843009213693952xf32> -> tensor<2305843009213693952xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{source element type 'f32' differs from destination element type 'bf16'; a redistribution moves elements unchanged}}
reshard.redistribute @element_types_differ from @m <[[tp]]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xbf16>

// -----

// Signedness is part of the element type.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{source element type 'i8' differs from destination element type 'ui8'}}
reshard.redistribute @signedness_differs from @m <[[tp]]> to @m <[[tp]]>
    : tensor<8xi8> -> tensor<8xui8>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{source shape [8, 4] differs from destination shape [4, 8]; both sides must hold the same global tensor}}
reshard.redistribute @shapes_differ from @m <[[tp], []]> to @m <[[tp], []]>
    : tensor<8x4xf32> -> tensor<4x8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{source shape [8] differs from destination shape [8, 1]}}
reshard.redistribute @ranks_differ from @m <[[tp]]> to @m <[[tp], []]>
    : tensor<8xf32> -> tensor<8x1xf32>

// -----

// ODS rejects an unranked tensor before the verifier runs.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{attribute 'src_type' failed to satisfy constraint: type attribute of ranked tensor of any type values}}
reshard.redistribute @unranked from @m <[[tp]]> to @m <[[tp]]>
    : tensor<*xf32> -> tensor<*xf32>

//===----------------------------------------------------------------------===//
// reshard.redistribute: symbols
//===----------------------------------------------------------------------===//

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{'reshard.redistribute' op src mesh @trainer is not defined; declare it with reshard.mesh}}
reshard.redistribute @unknown_src_mesh from @trainer <[[tp]]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{dst mesh @engine is not defined; declare it with reshard.mesh}}
reshard.redistribute @unknown_dst_mesh from @m <[[tp]]> to @engine <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @+1 {{symbol defined here}}
reshard.topology @dgx gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
// expected-error @+1 {{src mesh @dgx names a 'reshard.topology', not a reshard.mesh}}
reshard.redistribute @src_mesh_is_topology from @dgx <[[tp]]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @+1 {{symbol defined here}}
reshard.redistribute @other from @m <[[tp]]> to @m <[[]]>
    : tensor<8xf32> -> tensor<8xf32>
// expected-error @+1 {{dst mesh @other names a 'reshard.redistribute', not a reshard.mesh}}
reshard.redistribute @dst_mesh_is_tensor from @m <[[tp]]> to @other <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{topology @dgx is not defined; declare it with reshard.topology}}
reshard.redistribute @unknown_topology from @m <[[tp]]> to @m <[[]]> topology @dgx
    : tensor<8xf32> -> tensor<8xf32>

// -----

// expected-note @+1 {{symbol defined here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{topology @m names a 'reshard.mesh', not a reshard.topology}}
reshard.redistribute @topology_is_mesh from @m <[[tp]]> to @m <[[]]> topology @m
    : tensor<8xf32> -> tensor<8xf32>

// -----

// Meshes are looked up in the nearest symbol table only.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
module @inner {
  // expected-error @+2 {{src mesh @m is not defined}}
  // expected-error @+1 {{dst mesh @m is not defined}}
  reshard.redistribute @mesh_in_outer_module from @m <[[tp]]> to @m <[[]]>
      : tensor<8xf32> -> tensor<8xf32>
}

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @+1 {{see existing symbol definition here}}
reshard.redistribute @"model.layers.0.mlp.up_proj.weight" from @m <[[tp]]>
    to @m <[[]]> : tensor<8xf32> -> tensor<8xf32>
// expected-error @+1 {{redefinition of symbol named 'model.layers.0.mlp.up_proj.weight'}}
reshard.redistribute @"model.layers.0.mlp.up_proj.weight" from @m <[[]]>
    to @m <[[tp]]> : tensor<8xf32> -> tensor<8xf32>

// -----

// Tensors, meshes and topologies share one namespace.
// expected-note @+1 {{see existing symbol definition here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{redefinition of symbol named 'm'}}
reshard.redistribute @m from @m <[[tp]]> to @m <[[]]>
    : tensor<8xf32> -> tensor<8xf32>

//===----------------------------------------------------------------------===//
// reshard.redistribute: shardings
//===----------------------------------------------------------------------===//

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_sharding.dims: the sharding has 1 dims but the tensor has rank 2; give one list of mesh axes per tensor dim (mesh @m)}}
reshard.redistribute @src_sharding_rank from @m <[[tp]]> to @m <[[tp], []]>
    : tensor<8x4xf32> -> tensor<8x4xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{dst_sharding.dims: the sharding has 1 dims but the tensor has rank 0}}
reshard.redistribute @dst_sharding_rank from @m <[]> to @m <[[]]>
    : tensor<f32> -> tensor<f32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @+1 {{mesh @infer declared here}}
reshard.mesh @infer shape = [2, 2] axes = ["dp", "tp"] ranks = [2, 3, 4, 5]
// expected-error @+1 {{dst_sharding.dims[1][0]: axis 'ep' is not an axis of the mesh (its axes: dp, tp) (mesh @infer)}}
reshard.redistribute @unknown_axis from @m <[[tp], []]> to @infer <[[dp], [ep]]>
    : tensor<8x4xf32> -> tensor<8x4xf32>

// -----

// A 0-D mesh has no axis to shard over.
// expected-note @+1 {{mesh @one declared here}}
reshard.mesh @one shape = [] axes = [] ranks = [0]
// expected-error @+1 {{src_sharding.dims[0][0]: axis 'tp' is not an axis of the mesh (its axes: none) (mesh @one)}}
reshard.redistribute @axis_of_scalar_mesh from @one <[[tp]]> to @one <[[]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
// expected-error @+1 {{src_sharding.dims[0][2]: mesh axis 'tp' is used twice in dim 0; an axis shards at most one dim, once (mesh @m)}}
reshard.redistribute @axis_twice_in_one_dim from @m <[[tp, dp, tp]]> to @m <[[]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
// expected-error @+1 {{dst_sharding.dims[1][1]: mesh axis 'dp' is used twice (also by dim 0); an axis shards at most one dim, once (mesh @m)}}
reshard.redistribute @axis_in_two_dims from @m <[[], []]> to @m <[[dp], [tp, dp]]>
    : tensor<8x4xf32> -> tensor<8x4xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{@overlapping_runs src_sharding.order.0[1]: run [3, 5] overlaps run 0 [0, 4] of dim 0; runs must not overlap (mesh @m)}}
reshard.redistribute @overlapping_runs from @m <[[tp] order [[0, 4], [3, 5]]]> to @m <[[]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{@runs_leave_a_gap dst_sharding.order.1: no run covers indices [2, 4) of dim 1; the runs must cover [0, 8) exactly (mesh @m)}}
reshard.redistribute @runs_leave_a_gap from @m <[[], []]> to @m <[[], [tp] order [[4, 4], [0, 2]]]>
    : tensor<2x8xf32> -> tensor<2x8xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{@dim_order_repeats_a_dim dst_sharding.dim_order: [1, 1] is not a permutation of the tensor's 2 dim(s); list every dim 0..1 once, outermost first (mesh @m)}}
reshard.redistribute @dim_order_repeats_a_dim from @m <[[], []]> to @m <[[tp], []] dim_order [1, 1]>
    : tensor<2x8xf32> -> tensor<2x8xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{@dim_order_misses_a_dim src_sharding.dim_order: [1] is not a permutation of the tensor's 2 dim(s)}}
reshard.redistribute @dim_order_misses_a_dim from @m <[[], []] dim_order [1]> to @m <[[tp], []]>
    : tensor<2x8xf32> -> tensor<2x8xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{@quantized_dim_order dst_sharding.dim_order: a quantized side cannot store its dims in another order; store them row-major in logical order}}
reshard.redistribute @quantized_dim_order from @m <[[], []]> to @m <[[tp], []] dim_order [1, 0] quant block [1, 4]>
    : tensor<2x8xf32> -> tensor<2x8xf8E4M3FN>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{@run_outside_the_dim src_sharding.order.0[0]: run [6, 3] is outside dim 0 of size 8}}
reshard.redistribute @run_outside_the_dim from @m <[[tp] order [[6, 3], [0, 6]]]> to @m <[[]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{'order' needs at least one run}}
reshard.redistribute @no_runs from @m <[[tp] order []]> to @m <[[]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{expected ','}}
reshard.redistribute @run_not_a_pair from @m <[[tp] order [[8]]]> to @m <[[]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_sharding.blocks.0[1]: block size -2 must be non-negative (mesh @m)}}
reshard.redistribute @negative_block from @m <[[tp] blocks [6, -2, 4]]> to @m <[[]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{dst_sharding.blocks.1: blocks sum to 12 but dim 1 has size 16; blocks must add up to the dim (mesh @m)}}
reshard.redistribute @blocks_do_not_sum from @m <[[], [tp]]> to @m <[[], [tp] blocks [8, 2, 2]]>
    : tensor<4x16xf32> -> tensor<4x16xf32>

// -----

// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_sharding.blocks.0: blocks sum to at least 2^63 but dim 0 has size 4; blocks must add up to the dim (mesh @m)}}
reshard.redistribute @blocks_sum_overflow
    from @m <[[tp] blocks [9223372036854775807, 9223372036854775807]]> to @m <[[]]>
    : tensor<4xf32> -> tensor<4xf32>

// -----

// Both sides are checked, and every problem of a side is reported, each
// with a note at its mesh (both notes at @m match the one expectation:
// -verify-diagnostics cannot expect the same text twice on a line).
// expected-note @+1 {{mesh @m declared here}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @+1 {{mesh @n declared here}}
reshard.mesh @n shape = [2] axes = ["ep"] ranks = [2, 3]
// expected-error @+3 {{src_sharding.dims[0][0]: axis 'dp' is not an axis of the mesh (its axes: tp) (mesh @m)}}
// expected-error @+2 {{src_sharding.blocks.1: blocks sum to 3 but dim 1 has size 4}}
// expected-error @+1 {{dst_sharding.dims[1][0]: axis 'tp' is not an axis of the mesh (its axes: ep) (mesh @n)}}
reshard.redistribute @errors_on_both_sides from @m <[[dp], [tp] blocks [1, 2]]>
    to @n <[[], [tp]]> : tensor<8x4xf32> -> tensor<8x4xf32>

//===----------------------------------------------------------------------===//
// Sharding syntax
//===----------------------------------------------------------------------===//

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{'blocks' needs at least one block size}}
reshard.redistribute @empty_blocks from @m <[[tp] blocks []]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{expected '[' in a list of blocks}}
reshard.redistribute @blocks_without_list from @m <[[tp] blocks]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{expected integer value}}
reshard.redistribute @block_not_integer from @m <[[tp] blocks [4, tp]]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+2 {{integer value too large}}
reshard.redistribute @block_too_large
    from @m <[[tp] blocks [99999999999999999999]]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+2 {{expected ']' in a sharding (one list per dim)}}
reshard.redistribute @blocks_twice
    from @m <[[tp] blocks [4, 4] blocks [8]]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

// Each dim is its own bracketed list.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{expected '[' in a list of mesh axes}}
reshard.redistribute @dim_without_brackets from @m <[tp]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{expected a mesh axis name (identifier or string)}}
reshard.redistribute @axis_not_a_name from @m <[[0]]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{expected '[' in a list of mesh axes}}
reshard.redistribute @trailing_comma from @m <[[tp],]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{expected '<'}}
reshard.redistribute @sharding_without_angles from @m [[tp]] to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

// The same rules hold for the attribute written on its own.
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+2 {{'blocks' needs at least one block size}}
reshard.redistribute @standalone_dim_sharding from @m <[[tp]]> to @m <[[tp]]>
    : tensor<8xf32> -> tensor<8xf32> {dim = #reshard.dim_sharding<[tp] blocks []>}

// -----

// expected-error @+1 {{needs a non-empty symbol name}}
reshard.mesh @"" shape = [2] axes = ["tp"] ranks = [0, 1]

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{symbol name contains a NUL character; C callers of a plan would see it cut short}}
reshard.redistribute @"w\00x" from @m <[[tp]]> to @m <[[]]>
    : tensor<8xf32> -> tensor<8xf32>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_type has encoding "enc"; the sharding alone describes the layout}}
reshard.redistribute @encoded from @m <[[tp]]> to @m <[[]]>
    : tensor<8xf32, "enc"> -> tensor<8xf32, "enc">

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{src_type.shape: the tensor's byte size (product of its non-zero dims times the element size) overflows 64 bits}}
reshard.redistribute @overflow_with_zero_dim from @m <[[], [], []]> to @m <[[], [], []]>
    : tensor<0x4611686018427387904x4611686018427387904xf32> -> tensor<0x4611686018427387904x4611686018427387904xf32>

//===----------------------------------------------------------------------===//
// Quantized destinations
//===----------------------------------------------------------------------===//

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{the source sharding is quantized; only a destination can be}}
reshard.redistribute @quantized_source from @m <[[tp]] quant block [128]> to @m <[[]]>
    : tensor<256xbf16> -> tensor<256xbf16>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{destination element type 'bf16' of a quantized destination must be f8E4M3FN}}
reshard.redistribute @quantized_not_fp8 from @m <[[tp]]> to @m <[[]] quant block [128]>
    : tensor<256xbf16> -> tensor<256xbf16>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{source element type 'i32' cannot be quantized; use bf16, f16 or f32}}
reshard.redistribute @quantized_integers from @m <[[tp]]> to @m <[[]] quant block [128]>
    : tensor<256xi32> -> tensor<256xf8E4M3FN>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{differs from destination element type 'f8E4M3FN'; a redistribution moves elements unchanged (only a quantized destination changes them)}}
reshard.redistribute @fp8_without_quant from @m <[[tp]]> to @m <[[]]>
    : tensor<256xbf16> -> tensor<256xf8E4M3FN>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @-1 {{mesh @m declared here}}
// expected-error @+1 {{@quant_block_count dst_sharding.quant.block: 1 block size(s) for a tensor of rank 2; give one block size per dim (mesh @m)}}
reshard.redistribute @quant_block_count from @m <[[tp], []]> to @m <[[], []] quant block [128]>
    : tensor<256x4xbf16> -> tensor<256x4xf8E4M3FN>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @-1 {{mesh @m declared here}}
// expected-error @+1 {{@quant_block_zero dst_sharding.quant.block[0]: block size 0 must be at least 1 (mesh @m)}}
reshard.redistribute @quant_block_zero from @m <[[tp]]> to @m <[[]] quant block [0]>
    : tensor<256xbf16> -> tensor<256xf8E4M3FN>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @-1 {{mesh @m declared here}}
// expected-error @+1 {{@quant_mx_16 dst_sharding.quant.mx: MXFP8 blocks are 32 elements of the last dim, got 16 (mesh @m)}}
reshard.redistribute @quant_mx_16 from @m <[[tp]]> to @m <[[]] quant mx 16>
    : tensor<256xbf16> -> tensor<256xf8E4M3FN>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @-1 {{mesh @m declared here}}
// expected-error @+1 {{@quant_mx_0d dst_sharding.quant.mx: a 0-D tensor has no last dim to cut into MXFP8 blocks; quantize tensors of rank 1 or more (mesh @m)}}
reshard.redistribute @quant_mx_0d from @m <[]> to @m <[] quant mx 32>
    : tensor<bf16> -> tensor<f8E4M3FN>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @-1 {{mesh @m declared here}}
// expected-error @+1 {{@quant_with_order dst_sharding.order.0: a quantized side cannot have a storage order; store the dim in logical order (mesh @m)}}
reshard.redistribute @quant_with_order from @m <[[tp]]> to @m <[[] order [[128, 128], [0, 128]]] quant block [128]>
    : tensor<256xbf16> -> tensor<256xf8E4M3FN>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @-1 {{mesh @m declared here}}
// expected-error @+1 {{@quant_chunk_misaligned dst_sharding.dims[0]: shard boundary 100 of dim 0 (the chunk [0, 100) at tp=0) is not a multiple of the quantization block size 128; every chunk and block boundary along a quantized dim must be one, except at the dim's end (200) (mesh @m)}}
reshard.redistribute @quant_chunk_misaligned from @m <[[]]> to @m <[[tp]] quant block [128]>
    : tensor<200xbf16> -> tensor<200xf8E4M3FN>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-note @-1 {{mesh @m declared here}}
// expected-error @+1 {{@quant_block_misaligned dst_sharding.blocks.0[1]: block 1 of dim 0 starts at 80, which is not a multiple of the quantization block size 32 (mesh @m)}}
reshard.redistribute @quant_block_misaligned from @m <[[]]> to @m <[[tp] blocks [80, 112]] quant mx 32>
    : tensor<192xbf16> -> tensor<192xf8E4M3FN>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{@quant_clash is quantized and its scales are named @"quant_clash.scale", but that name is taken; rename one}}
reshard.redistribute @quant_clash from @m <[[tp]]> to @m <[[]] quant block [128]>
    : tensor<256xbf16> -> tensor<256xf8E4M3FN>
// expected-note @+1 {{@"quant_clash.scale" defined here}}
reshard.redistribute @quant_clash.scale from @m <[[tp]]> to @m <[[]]>
    : tensor<2xf32> -> tensor<2xf32>

// -----

// expected-error @+2 {{quant needs block sizes or an mx block length}}
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @quant_empty from @m <[[tp]]> to @m <[[]] quant block []>
    : tensor<256xbf16> -> tensor<256xf8E4M3FN>

// -----

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
// expected-error @+1 {{expected 'block' or 'mx' after 'quant'}}
reshard.redistribute @quant_unknown from @m <[[tp]]> to @m <[[]] quant nvfp4 16>
    : tensor<256xbf16> -> tensor<256xf8E4M3FN>
