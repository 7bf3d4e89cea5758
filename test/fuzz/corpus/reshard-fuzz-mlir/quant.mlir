reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @n shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
reshard.redistribute @w from @m <[[tp], []]> to @n <[[], [tp]] quant block [128, 128]> : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>
reshard.redistribute @e from @m <[[], []]> to @n <[[dp], [tp]] quant mx 32> : tensor<4x64xf32> -> tensor<4x64xf8E4M3FN>
reshard.redistribute @u from @m <[[tp], []]> to @n <[[], [tp]] quant block [128, 128] ue8m0> : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>
