// reshard-quantize errors: a source that does not hold whole blocks (only a
// receiver could quantize it, which is not implemented yet), and the stages
// that do not take quantized destinations yet: planning without the pass,
// the lowering to reshard_rt (the runtime does not quantize), and
// reshard-run; each names the tensor and what to do instead.

// RUN: rm -rf %t && split-file %s %t
// RUN: not reshard-opt %t/partial.mlir --reshard-quantize -o /dev/null 2>&1 | FileCheck %s --check-prefix=PARTIAL
// PARTIAL: error: 'reshard.redistribute' op @w: the source does not hold whole quantization blocks (the device at tp=0 holds indices [0, 100) of dim 0, not whole blocks of 64), so only a receiver could quantize it; quantizing on the receiver is not implemented yet
// RUN: not reshard-opt %t/partial-order.mlir --reshard-quantize -o /dev/null 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: error: 'reshard.redistribute' op @w: the source does not hold whole quantization blocks (a storage order run or fused block does not start on a quantization block)

// RUN: not reshard-opt %t/good.mlir --reshard-intersect -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNDECIDED
// UNDECIDED: error: 'reshard.redistribute' op @w: its destination is quantized (block [64]) but not yet decided where; run reshard-quantize first (reshard-plan-pipeline and reshard-compile do)
// RUN: not reshard-opt %t/good.mlir --reshard-plan-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOWER
// LOWER: error: 'reshard.redistribute' op @w: quantized destinations are planned and reported but not lowered yet (the runtime does not quantize); use --reshard-plan-pipeline=lower=false --reshard-report
// RUN: not reshard-compile %t/good.mlir --backend=mpi -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOWER
// RUN: not reshard-run %t/good.mlir --check 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: reshard-opt %t/good.mlir --reshard-quantize -o %t/decided.mlir
// RUN: not reshard-run %t/decided.mlir --check 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: not reshard-run %t/decided.mlir --check --engine 2>&1 | FileCheck %s --check-prefix=REFUSED
// REFUSED: error: 'reshard.redistribute' op @w: reshard-run does not run quantized destinations yet; plan and report them with reshard-opt --reshard-plan-pipeline=lower=false --reshard-report

// A decided payload without its scales redistribution is refused.
// RUN: sed -e '/scales_of/d' %t/decided.mlir > %t/no-scales.mlir
// RUN: not reshard-opt %t/no-scales.mlir --reshard-intersect --reshard-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-SCALES
// NO-SCALES: error: 'reshard.redistribute' op is quantized on the sender but has no scales redistribution @"w.scale"; run reshard-quantize on the layout

//--- partial.mlir
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]] quant block [64]>
    : tensor<200xbf16> -> tensor<200xf8E4M3FN>

//--- partial-order.mlir
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[] order [[32, 96], [0, 32]]]> to @m <[[]] quant block [64]>
    : tensor<128xbf16> -> tensor<128xf8E4M3FN>

//--- good.mlir
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]] quant block [64]>
    : tensor<256xbf16> -> tensor<256xf8E4M3FN>
