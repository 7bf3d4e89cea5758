reshard.mesh @train shape = [2, 2] axes = ["dp", "tp"] ranks = [0, 1, 2, 3]
reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [4, 5]
reshard.redistribute @step from @train <[]> to @infer <[]>
    : tensor<f32> -> tensor<f32>
reshard.pieces @step rank 0 holders [[0, 1, 2, 3]] [
  box [] size [] from 0 at [] to 4 at [] group 0,
  box [] size [] from 0 at [] to 5 at [] group 0
]
reshard.redistribute @"lm_head/weight:0" from @train <[[], [], []]>
    to @infer <[[], [], []]> : tensor<1x2x5xbf16> -> tensor<1x2x5xbf16>
reshard.pieces @"lm_head/weight:0" rank 3 holders [] [
] {note = "hand-written"}
