// A one-GPU plan for scripts/gpu-check.sh: on a 1-device mesh every layout
// holds whole tensors, so the plan is local copies, box by box (blocks make
// several boxes): it exercises the NCCL backend's agreement, copies and
// bandwidth on one GPU. 256 MiB of bf16 plus fused blocks, and two FP8
// destinations (block [128, 128] from bf16, MXFP8 from fp32): the scales
// kernel, then the fused kernel that quantizes as it copies.
reshard.mesh @gpu shape = [1] axes = ["tp"] ranks = [0]
reshard.redistribute @"model.embed_tokens.weight" from @gpu <[[tp], []]>
    to @gpu <[[], [tp]]> : tensor<16384x8192xbf16> -> tensor<16384x8192xbf16>
reshard.redistribute @"model.layers.0.mlp.gate_up_proj.weight"
    from @gpu <[[tp] blocks [2048, 2048], []]>
    to @gpu <[[tp] blocks [2048, 2048], []]>
    : tensor<4096x4096xbf16> -> tensor<4096x4096xbf16>
reshard.redistribute @"model.norm.weight" from @gpu <[[]]> to @gpu <[[tp]]>
    : tensor<8192xf32> -> tensor<8192xf32>
reshard.redistribute @"model.layers.0.self_attn.o_proj.weight"
    from @gpu <[[tp], []]> to @gpu <[[], [tp]] quant block [128, 128]>
    : tensor<1024x1024xbf16> -> tensor<1024x1024xf8E4M3FN>
reshard.redistribute @"model.layers.0.mlp.down_proj.weight"
    from @gpu <[[], [tp]]> to @gpu <[[tp], []] quant mx 32>
    : tensor<256x2048xf32> -> tensor<256x2048xf8E4M3FN>
