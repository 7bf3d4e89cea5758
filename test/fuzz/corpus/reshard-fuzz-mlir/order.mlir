reshard.mesh @train shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @infer shape = [3] axes = ["tp"] ranks = [0, 1, 2]
reshard.redistribute @qkv from @train <[[tp] order [[0, 4], [8, 2], [10, 2], [4, 4], [6, 0]], []]> to @infer <[[tp] order [[6, 6], [0, 6]] blocks [6, 6], []]> : tensor<12x4xbf16> -> tensor<12x4xbf16>
