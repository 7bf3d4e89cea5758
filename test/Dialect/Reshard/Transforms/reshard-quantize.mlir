// reshard-quantize: a quantized destination whose source holds whole blocks
// is quantized on the sender. The payload op keeps its types and is marked;
// the scales get their own redistribution right after it, its shardings
// the payload's divided by the block sizes (dims, fused blocks and the
// source's storage order runs), fp32 for block scaling and ui8 (E8M0) for
// MX. A source that cuts a block (a chunk boundary, or a storage order
// run, off the block grid) leaves it to the receivers: the payload moves
// at full precision and the scales are an identity on the destination
// mesh. Ops already decided and plain ops are left alone; running it twice
// changes nothing. The planned module moves payload and scales like any
// other tensors, and the report counts their bytes, per side.

// RUN: reshard-opt %s --reshard-quantize | FileCheck %s
// RUN: reshard-opt %s --reshard-quantize --reshard-quantize | FileCheck %s
// RUN: reshard-opt %s --reshard-plan-pipeline=lower=false --reshard-report=text -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: reshard-opt %s --reshard-plan-pipeline=lower=false --reshard-report=json -o /dev/null | FileCheck %s --check-prefix=JSON

reshard.mesh @train shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @infer shape = [2, 2] axes = ["dp", "tp"] ranks = [2, 3, 4, 5]

// CHECK-LABEL: reshard.redistribute @w from @train <{{\[\[}}tp], []]> to @infer <{{\[\[}}], [tp]] quant block [128, 128]>
// CHECK-SAME: : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN> {quantize_on = "sender"}
// CHECK-NEXT: reshard.redistribute @w.scale from @train <{{\[\[}}tp], []]> to @infer <{{\[\[}}], [tp]]>
// CHECK-SAME: : tensor<2x4xf32> -> tensor<2x4xf32> {scales_of = @w}
reshard.redistribute @w from @train <[[tp], []]> to @infer <[[], [tp]] quant block [128, 128]>
    : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>

// Fused blocks and a storage order on the source (runs of whole blocks),
// uneven last blocks (300 rows: blocks of 128, 128, 44).
// CHECK-LABEL: reshard.redistribute @qkv
// CHECK-NEXT: reshard.redistribute @qkv.scale from @train <{{\[\[}}] order {{\[\[}}2, 1], [0, 2]], []]> to @infer <{{\[\[}}] blocks [2, 1], [tp]]>
// CHECK-SAME: : tensor<3x2xf32> -> tensor<3x2xf32> {scales_of = @qkv}
reshard.redistribute @qkv from @train <[[] order [[256, 44], [0, 256]], []]>
    to @infer <[[] blocks [256, 44], [tp]] quant block [128, 32]>
    : tensor<300x64xf16> -> tensor<300x64xf8E4M3FN>

// MXFP8: blocks of 32 along the last dim, E8M0 scales as ui8.
// CHECK-LABEL: reshard.redistribute @e from @train <{{\[\[}}], [tp]]> to @infer <{{\[\[}}dp], [tp]] quant mx 32>
// CHECK-SAME: {quantize_on = "sender"}
// CHECK-NEXT: reshard.redistribute @e.scale from @train <{{\[\[}}], [tp]]> to @infer <{{\[\[}}dp], [tp]]>
// CHECK-SAME: : tensor<4x4xui8> -> tensor<4x4xui8> {scales_of = @e}
reshard.redistribute @e from @train <[[], [tp]]> to @infer <[[dp], [tp]] quant mx 32>
    : tensor<4x128xf32> -> tensor<4x128xf8E4M3FN>

// Receivers quantize: tp cuts 200 rows at 100, not a multiple of 64
// (power-of-two scales: planned as any block scaling).
// CHECK-LABEL: reshard.redistribute @cut from @train <{{\[\[}}tp]]> to @infer <{{\[\[}}]] quant block [64] ue8m0>
// CHECK-SAME: {quantize_on = "receiver"}
// CHECK-NEXT: reshard.redistribute @cut.scale from @infer <{{\[\[}}]]> to @infer <{{\[\[}}]]>
// CHECK-SAME: : tensor<4xf32> -> tensor<4xf32> {scales_of = @cut}
reshard.redistribute @cut from @train <[[tp]]> to @infer <[[]] quant block [64] ue8m0>
    : tensor<200xbf16> -> tensor<200xf8E4M3FN>

// A storage order run that starts off the 32-column MX grid (at 16).
// CHECK-LABEL: reshard.redistribute @swap
// CHECK-SAME: {quantize_on = "receiver"}
// CHECK-NEXT: reshard.redistribute @swap.scale from @infer <{{\[\[}}], [tp]]> to @infer <{{\[\[}}], [tp]]>
// CHECK-SAME: : tensor<8x2xui8> -> tensor<8x2xui8> {scales_of = @swap}
reshard.redistribute @swap from @train <[[], [] order [[16, 48], [0, 16]]]>
    to @infer <[[], [tp]] quant mx 32> : tensor<8x64xbf16> -> tensor<8x64xf8E4M3FN>

// CHECK-LABEL: reshard.redistribute @plain
// CHECK-NOT: quantize_on
// CHECK-NOT: .scale
reshard.redistribute @plain from @train <[[tp]]> to @infer <[[tp]]>
    : tensor<64xbf16> -> tensor<64xbf16>

// 256x512 + 300x64 + 4x128 + 200 + 8x64 payload bytes; 4 x (8 + 6) fp32
// + 16 E8M0 + 4 fp32 + 16 E8M0 scale bytes; 2 x 131072 + 2 x 19200 +
// 4 x 512 + 400 + 1024 at full precision. One copy moves the senders'
// payload and scales (150784 + 72) and the receivers' full precision
// (400 + 1024).
// REPORT: quantized: 3 tensors on the sender, 2 on the receiver; 151496 B of FP8 payload + 104 B of scales from 304016 B; one copy of each moves 152280 B (0.501 of the full precision)
// REPORT-NEXT: on the sender: w (131104 B moved of 262144 B), qkv (19224 B moved of 38400 B), e (528 B moved of 2048 B)
// REPORT-NEXT: on the receiver (a source shard cuts a block): cut (400 B moved of 400 B), swap (1024 B moved of 1024 B)
// The receivers' quantizer writes their scales: no copy is counted.
// REPORT: 7 1 0 0 0 0 0 0 none cut.scale
// REPORT: 9 1 0 0 0 0 0 0 none swap.scale
// JSON: "quantized": {
// JSON-NEXT: "full_precision_bytes": 304016,
// JSON-NEXT: "moved_bytes": 152280,
// JSON-NEXT: "on_receiver": 2,
// JSON-NEXT: "on_sender": 3,
// JSON-NEXT: "payload_bytes": 151496,
// JSON-NEXT: "scale_bytes": 104,
// JSON: "name": "w",
// JSON-NEXT: "payload_bytes": 131072,
// JSON-NEXT: "quant": "block [128, 128]",
// JSON-NEXT: "quantize_on": "sender",
// JSON-NEXT: "scale_bytes": 32
// JSON: "full_precision_bytes": 400,
// JSON-NEXT: "moved_bytes": 400,
// JSON-NEXT: "name": "cut",
// JSON-NEXT: "payload_bytes": 200,
// JSON-NEXT: "quant": "block [64] ue8m0",
// JSON-NEXT: "quantize_on": "receiver",
// JSON-NEXT: "scale_bytes": 16
