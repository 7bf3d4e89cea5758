// The encoder's checks of `quant_classes` and `quant_tensors`: each row
// must name two distinct tensors, a known input type and row, classes of
// 1-byte payload and 4-byte (block) scales on one source mesh, and runs
// that add up to every source shard in blocks that are the scales shard
// on the same device; anything else is refused before the generated code
// could quantize out of bounds.

// RUN: rm -rf %t && mkdir -p %t
// RUN: reshard-opt %S/../../Conversion/ReshardToRuntime/convert-quantized.mlir --reshard-plan-pipeline -o %t/plan.mlir
// RUN: sed -e 's/quant_tensors = \[0, 1, 1, 0\]/quant_tensors = [0, 0, 1, 0]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=SAME
// SAME: quant_tensors[0]: payload and scales must be two tensors of the plan
// RUN: sed -e 's/quant_tensors = \[0, 1, 1, 0\]/quant_tensors = [0, 1, 3, 0]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: quant_tensors[0]: input must be 0 (fp32), 1 (bf16) or 2 (fp16), and the row one of quant_classes
// RUN: sed -e 's/quant_tensors = \[0, 1, 1, 0\]/quant_tensors = [1, 0, 1, 0]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=CLASSES
// CLASSES: quant_tensors[0]: the payload's class must have 1-byte elements and the row's rank and combos, the scales' class 4-byte elements, both one source mesh
// RUN: sed -e 's/quant_classes = \[1, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [1, 2, 2, 2, 2, 1, 2, 1, 3, 1, 2, 1, 4]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=RUNS
// RUNS: quant_tensors[0]: on source device 0, dim 1: runs of 3 elements in 2 blocks for a payload shard of 4 and a scales shard of 2
// RUN: sed -e 's/quant_classes = \[1, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [1, 2, 1, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=BLOCKS
// BLOCKS: quant_tensors[0]: on source device 0, dim 0: runs of 2 elements in 2 blocks for a payload shard of 2 and a scales shard of 1
// RUN: sed -e 's/quant_classes = \[1, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [3, 2, 2, 2]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=KIND
// KIND: quant_classes row 0: a row starts with the kind (1 block, 2 mx) and a rank of at most 64
// RUN: sed -e 's/quant_classes = \[1, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [1, 2, 2, 2, 2, 1, 2]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: quant_classes row 0: runs of combo 0 dim 1 are cut short
// RUN: sed -e 's/ quant_tensors = \[0, 1, 1, 0\]//' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=HALF
// HALF: states quant_classes or quant_tensors without the other

// The NCCL backend quantizes with a CUDA kernel: the plan insists on nvcc.
// RUN: reshard-translate --reshard-to-cpp --backend=nccl %t/plan.mlir | FileCheck %s --check-prefix=NCCL
// NCCL: #include "reshard/ExecutionEngine/NcclBackend.h"
// NCCL-NEXT: #if !defined(__CUDACC__)
// NCCL-NEXT: #error "this plan quantizes on the GPU: compile it with nvcc -x cu"
// NCCL-NEXT: #endif
// RUN: reshard-translate --reshard-to-cpp --backend=mpi %t/plan.mlir | FileCheck %s --check-prefix=MPI
// MPI: const QuantClass kQuantClasses[] = {
// MPI: const QuantTensor kQuantTensors[] = {
// MPI-NEXT: {0, 1, 1, 0},};
// MPI: kQuantClasses, 1, kQuantTensors, 1, kTensorQuant};
