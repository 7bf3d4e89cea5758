// two-ranks.mlir with a bf16 tensor quantized to FP8 blocks of 4 x 4 on its
// way: the plan reads the source elements and writes fp32 scales as words.
reshard.mesh @src shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @dst shape = [2] axes = ["tp"] ranks = [1, 0]
reshard.redistribute @w from @src <[[tp], []]>
    to @dst <[[], [tp]] quant block [4, 4]>
    : tensor<8x8xbf16> -> tensor<8x8xf8E4M3FN>
