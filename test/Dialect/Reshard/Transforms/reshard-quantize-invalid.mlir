// reshard-quantize errors: a module planned without the pass, a decided
// payload without its scales, a place that is not one; each names the
// tensor and what to do instead. A module may state the decision itself
// (reshard-compile takes decided modules): the verifier checks it against
// what the pass would make, at the op that differs.

// RUN: rm -rf %t && split-file %s %t
// RUN: not reshard-opt %t/good.mlir --reshard-intersect -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNDECIDED
// UNDECIDED: error: 'reshard.redistribute' op @w: its destination is quantized (block [64]) but not yet decided where; run reshard-quantize first (reshard-plan-pipeline and reshard-compile do)
// RUN: reshard-opt %t/good.mlir --reshard-quantize -o %t/decided.mlir
// RUN: FileCheck %s --check-prefix=DECIDED < %t/decided.mlir
// DECIDED: {quantize_on = "sender"}

// A decided payload without its scales redistribution is refused.
// RUN: sed -e '/scales_of/d' %t/decided.mlir > %t/no-scales.mlir
// RUN: not reshard-opt %t/no-scales.mlir --reshard-intersect --reshard-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-SCALES
// NO-SCALES: error: 'reshard.redistribute' op @w is quantized but has no scales: reshard-quantize adds @"w.scale" with scales_of = @w
// RUN: sed -e 's/quantize_on = "sender"/quantize_on = "nowhere"/' %t/decided.mlir > %t/nowhere.mlir
// RUN: not reshard-opt %t/nowhere.mlir --reshard-intersect -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOWHERE
// NOWHERE: error: 'reshard.redistribute' op quantize_on = "nowhere" is not a place; "sender" and "receiver" are

// RUN: sed -e 's/quantize_on = "sender"/quantize_on = 1/' %t/decided.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=NOT-TEXT
// NOT-TEXT: :3:3: error: 'reshard.redistribute' op quantize_on must be "sender" or "receiver", not 1 : i64
// RUN: sed -e 's/scales_of = @w/scales_of = "w"/' %t/decided.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=NOT-SYMBOL
// NOT-SYMBOL: :4:3: error: 'reshard.redistribute' op scales_of must name a tensor (@name), not "w"

// The scales' redistribution must be the one the pass makes: its type,
// meshes and shardings, each refused at the scales' op.
// RUN: sed -e 's/tensor<4xf32> -> tensor<4xf32>/tensor<3xf32> -> tensor<3xf32>/' %t/decided.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: :4:3: error: 'reshard.redistribute' op moves 'tensor<3xf32>' to 'tensor<3xf32>', but the scales of @w are 'tensor<4xf32>'
// RUN: sed -e 's/tensor<4xf32> -> tensor<4xf32>/tensor<4xi32> -> tensor<4xi32>/' %t/decided.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=ELEMENT
// ELEMENT: :4:3: error: 'reshard.redistribute' op moves 'tensor<4xi32>' to 'tensor<4xi32>', but the scales of @w are 'tensor<4xf32>'
// RUN: sed -e 's/to @m <\[\[\]\]> :/to @m <[[tp]]> :/' %t/decided.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=DST
// DST: :4:3: error: 'reshard.redistribute' op is sharded #reshard.sharding<{{\[\[}}tp]]> on its destination, but the scales of @w are #reshard.sharding<{{\[\[}}]]>
// RUN: sed -e 's/@w.scale from @m <\[\[tp\]\]>/@w.scale from @m <[[]]>/' %t/decided.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=SRC
// SRC: :4:3: error: 'reshard.redistribute' op is sharded #reshard.sharding<{{\[\[}}]]> on its source, but the scales of @w are #reshard.sharding<{{\[\[}}tp]]>

// A second op that says it holds @w's scales; scales of a tensor that is
// not quantized.
// RUN: sed -e '/@w.scale from/{p;s/@w.scale from/@other from/;}' %t/decided.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=SECOND
// SECOND: :5:3: error: 'reshard.redistribute' op is named @"other", but the scales of @w are named @"w.scale"
// RUN: not reshard-opt %t/scales-of-plain.mlir 2>&1 | FileCheck %s --check-prefix=PLAIN
// PLAIN: :3:1: error: 'reshard.redistribute' op scales_of = @w names no quantized redistribution that reshard-quantize decided (with quantize_on)

// Receivers quantize where a source shard cuts a block (200 columns over
// two ranks, MX blocks of 32): saying senders do is refused, and so are
// the scales of receivers that start anywhere but the destination.
// RUN: reshard-opt %t/cut.mlir --reshard-quantize -o %t/cut-decided.mlir
// RUN: FileCheck %s --check-prefix=RECEIVER < %t/cut-decided.mlir
// RECEIVER: {quantize_on = "receiver"}
// RECEIVER: @w.scale from @n <{{\[\[}}tp], []]> to @n <{{\[\[}}tp], []]> : tensor<2x7xui8> -> tensor<2x7xui8> {scales_of = @w}
// RUN: sed -e 's/quantize_on = "receiver"/quantize_on = "sender"/' %t/cut-decided.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=FORGED
// FORGED: :4:3: error: 'reshard.redistribute' op @w is quantized on its senders, but the device at tp=0 holds indices [0, 100) of dim 1, not whole blocks of 32
// RUN: sed -e 's/@w.scale from @n/@w.scale from @m/' %t/cut-decided.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=MESH
// MESH: :5:3: error: 'reshard.redistribute' op goes from mesh @m to @n, but the scales of @w go from @n to @n (quantized on the receivers, they stay where they are made)
// RUN: sed -e 's/tensor<2x7xui8> -> tensor<2x7xui8>/tensor<2x7xi8> -> tensor<2x7xi8>/' %t/cut-decided.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=E8M0
// E8M0: :5:3: error: 'reshard.redistribute' op moves 'tensor<2x7xi8>' to 'tensor<2x7xi8>', but the scales of @w are 'tensor<2x7xui8>'

//--- scales-of-plain.mlir
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]]> : tensor<8xf32> -> tensor<8xf32>
reshard.redistribute @"w.scale" from @m <[[tp]]> to @m <[[]]>
    : tensor<2xf32> -> tensor<2xf32> {scales_of = @w}

//--- cut.mlir
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.mesh @n shape = [2] axes = ["tp"] ranks = [2, 3]
reshard.redistribute @w from @m <[[], [tp]]> to @n <[[tp], []] quant mx 32>
    : tensor<2x200xbf16> -> tensor<2x200xf8E4M3FN>

//--- good.mlir
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]] quant block [64]>
    : tensor<256xbf16> -> tensor<256xf8E4M3FN>
