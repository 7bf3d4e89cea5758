// reshard-quantize at the edges. Dims of billions of blocks: whether a
// side holds whole blocks is decided on runs of block indices, never block
// by block, so it takes no time and no memory per block (2^32 blocks of 1
// element, 2 rows of 2^55 MX blocks). An empty fused block at the dim's
// end, off the block grid, cuts no block.

// RUN: reshard-opt %s --reshard-quantize | FileCheck %s

reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]

// CHECK: reshard.redistribute @w from @m <{{\[\[}}tp]]> to @m <{{\[\[}}]] quant block [1]> : tensor<4294967296xbf16> -> tensor<4294967296xf8E4M3FN> {quantize_on = "sender"}
// CHECK-NEXT: reshard.redistribute @w.scale from @m <{{\[\[}}tp]]> to @m <{{\[\[}}]]> : tensor<4294967296xf32> -> tensor<4294967296xf32> {scales_of = @w}
reshard.redistribute @w from @m <[[tp]]> to @m <[[]] quant block [1]>
    : tensor<4294967296xbf16> -> tensor<4294967296xf8E4M3FN>

// CHECK: reshard.redistribute @x from @m <{{\[\[}}], [tp]]> to @m <{{\[\[}}], []] quant mx 32> : tensor<2x1152921504606846976xbf16> -> tensor<2x1152921504606846976xf8E4M3FN> {quantize_on = "sender"}
// CHECK-NEXT: reshard.redistribute @x.scale from @m <{{\[\[}}], [tp]]> to @m <{{\[\[}}], []]> : tensor<2x36028797018963968xui8> -> tensor<2x36028797018963968xui8> {scales_of = @x}
reshard.redistribute @x from @m <[[], [tp]]> to @m <[[], []] quant mx 32>
    : tensor<2x1152921504606846976xbf16> -> tensor<2x1152921504606846976xf8E4M3FN>

// CHECK: reshard.redistribute @z from @m <{{\[\[}}tp]]> to @m <{{\[\[}}] blocks [200, 0]] quant block [128]> : tensor<200xbf16> -> tensor<200xf8E4M3FN> {quantize_on = "receiver"}
// CHECK-NEXT: reshard.redistribute @z.scale from @m <{{\[\[}}] blocks [2, 0]]> to @m <{{\[\[}}] blocks [2, 0]]> : tensor<2xf32> -> tensor<2xf32> {scales_of = @z}
reshard.redistribute @z from @m <[[tp]]> to @m <[[] blocks [200, 0]] quant block [128]>
    : tensor<200xbf16> -> tensor<200xf8E4M3FN>
