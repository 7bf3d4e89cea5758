// Rows of an 8 x 8 f32 tensor on ranks 0 and 1 become columns on ranks 1
// and 0: every rank sends and receives.
reshard.mesh @src shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @dst shape = [2] axes = ["tp"] ranks = [1, 0]
reshard.redistribute @w from @src <[[tp], []]> to @dst <[[], [tp]]>
    : tensor<8x8xf32> -> tensor<8x8xf32>
