reshard.mesh @train shape = [2] axes = ["etp"] ranks = [0, 1]
reshard.mesh @infer shape = [3] axes = ["tp"] ranks = [2, 3, 4]
reshard.redistribute @w13 from @train <[[], [etp], []]> to @infer <[[], [tp], []] dim_order [1, 0, 2]> : tensor<2x6x4xbf16> -> tensor<2x6x4xbf16>
reshard.redistribute @b13 from @train <[[], [etp]] dim_order [0, 1]> to @infer <[[], [tp]] dim_order [1, 0]> : tensor<2x6xf32> -> tensor<2x6xf32>
