// A 16 GiB tensor (65536 x 131072 bf16): rows over 2 ranks to columns over 2.
reshard.mesh @src shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @dst shape = [2] axes = ["tp"] ranks = [2, 3]
reshard.redistribute @w from @src <[[tp], []]> to @dst <[[], [tp]]> : tensor<65536x131072xbf16> -> tensor<65536x131072xbf16>
