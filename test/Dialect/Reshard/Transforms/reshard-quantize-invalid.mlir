// reshard-quantize errors: a module planned without the pass, a decided
// payload without its scales, a place that is not one; each names the
// tensor and what to do instead.

// RUN: rm -rf %t && split-file %s %t
// RUN: not reshard-opt %t/good.mlir --reshard-intersect -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNDECIDED
// UNDECIDED: error: 'reshard.redistribute' op @w: its destination is quantized (block [64]) but not yet decided where; run reshard-quantize first (reshard-plan-pipeline and reshard-compile do)
// RUN: reshard-opt %t/good.mlir --reshard-quantize -o %t/decided.mlir
// RUN: FileCheck %s --check-prefix=DECIDED < %t/decided.mlir
// DECIDED: {quantize_on = "sender"}

// A decided payload without its scales redistribution is refused.
// RUN: sed -e '/scales_of/d' %t/decided.mlir > %t/no-scales.mlir
// RUN: not reshard-opt %t/no-scales.mlir --reshard-intersect --reshard-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-SCALES
// NO-SCALES: error: 'reshard.redistribute' op is quantized but has no scales redistribution @"w.scale"; run reshard-quantize on the layout
// RUN: sed -e 's/quantize_on = "sender"/quantize_on = "nowhere"/' %t/decided.mlir > %t/nowhere.mlir
// RUN: not reshard-opt %t/nowhere.mlir --reshard-intersect -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOWHERE
// NOWHERE: error: 'reshard.redistribute' op quantize_on = "nowhere" is not a place; "sender" and "receiver" are

//--- good.mlir
reshard.mesh @m shape = [2] axes = ["tp"] ranks = [0, 1]
reshard.redistribute @w from @m <[[tp]]> to @m <[[]] quant block [64]>
    : tensor<256xbf16> -> tensor<256xf8E4M3FN>
