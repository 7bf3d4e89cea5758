// Same tensor and ranks as two-ranks.mlir, another destination layout: a
// different plan with the same name.
reshard.mesh @src shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @dst shape = [2] axes = ["tp"] ranks = [1, 0]
reshard.redistribute @w from @src <[[tp], []]> to @dst <[[tp], []]>
    : tensor<8x8xf32> -> tensor<8x8xf32>
