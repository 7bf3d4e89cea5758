// A small refit: two tensors of one transformer layer move from a trainer
// laid out as 2 data-parallel replicas of TP4 (ranks 0-7, one DGX H100 node)
// to an inference engine with TP2 (ranks 8-9, a second node).
reshard.topology @dgx_h100 gpus_per_node = 8 nvl_domain_size = 8
    nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
reshard.mesh @train shape = [2, 4] axes = ["dp", "tp"]
    ranks = [0, 1, 2, 3, 4, 5, 6, 7]
reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [8, 9]

// Fused q/k/v rows: 32 query rows and 8 rows each of k and v, chunked per
// block so every TP rank holds its share of q, then of k, then of v.
reshard.redistribute @"model.layers.0.self_attn.qkv_proj.weight"
    from @train <[[tp] blocks [32, 8, 8], []]>
    to @infer <[[tp] blocks [32, 8, 8], []]> topology @dgx_h100
    : tensor<48x32xbf16> -> tensor<48x32xbf16>

// Row-parallel down projection: columns sharded on both sides.
reshard.redistribute @"model.layers.0.mlp.down_proj.weight"
    from @train <[[], [tp]]> to @infer <[[], [tp]]> topology @dgx_h100
    : tensor<32x64xbf16> -> tensor<32x64xbf16>
