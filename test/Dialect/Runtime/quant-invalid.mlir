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
// The scales' name is the callers' key for them; names are unique.
// RUN: sed -e 's/ tensors = \["w", "w.scale"\]/ tensors = ["w", "w.scales"]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=NAME
// NAME: quant_tensors[0]: the scales of 'w' are named 'w.scale', not 'w.scales'
// RUN: sed -e 's/ tensors = \["w", "w.scale"\]/ tensors = ["w", "w"]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: 'reshard_rt.plan' op names tensor 1 'w', as tensor 0; a plan's tensor names are unique
// C callers get the names as C strings: none empty, none holding a NUL.
// RUN: sed -e 's/ tensors = \["w", "w.scale"\]/ tensors = ["w", "w\\00x"]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=NUL
// NUL: 'reshard_rt.plan' op names tensor 1 with an empty name or one holding a NUL character
// A group of a quantized plan naming a class the plan does not have.
// RUN: sed -e 's/reshard_rt.group 1 class 1 /reshard_rt.group 1 class 32 /' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=GROUP
// GROUP: 'reshard_rt.group' op names class 32 of 2
// RUN: sed -e 's/quant_tensors = \[0, 1, 1, 0\]/quant_tensors = [0, 1, 3, 0]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=INPUT
// INPUT: quant_tensors[0]: input must be 0 (fp32), 1 (bf16) or 2 (fp16), and the row one of quant_classes
// RUN: sed -e 's/quant_tensors = \[0, 1, 1, 0\]/quant_tensors = [1, 0, 1, 0]/' -e 's/ tensors = \["w", "w.scale"\]/ tensors = ["w.scale.scale", "w.scale"]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=CLASSES
// CLASSES: quant_tensors[0]: the payload's class must have 1-byte elements and the row's rank and source combos, the scales' class 4-byte elements, both one source mesh
// RUN: sed -e 's/quant_classes = \[1, 0, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [1, 0, 2, 2, 2, 2, 1, 2, 1, 3, 1, 2, 1, 4]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=RUNS
// RUNS: quant_tensors[0]: on source device 0, dim 1: runs of 3 elements in 2 blocks for a payload shard of 4 and a scales shard of 2
// RUN: sed -e 's/quant_classes = \[1, 0, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [1, 0, 2, 1, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=BLOCKS
// BLOCKS: quant_tensors[0]: on source device 0, dim 0: runs of 2 elements in 2 blocks for a payload shard of 2 and a scales shard of 1
// RUN: sed -e 's/quant_classes = \[1, 0, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [4, 0, 2, 2, 2]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=KIND
// A row of rank 0 (0-D tensors are not quantized) would state its combos
// in no words: C of them would cost C records per 4 words of input.
// RUN: sed -e 's/quant_classes = \[1, 0, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [1, 0, 0, 2]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=KIND
// KIND: quant_classes row 0: a row starts with the kind (1 block, 2 mx, 3 block with ue8m0 scales), the side (0 sender, 1 receiver) and a rank in [1, 64]
// RUN: sed -e 's/quant_classes = \[1, 0, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [1, 0, 2, 2, 2, 2, 1, 2]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: quant_classes row 0: 2 combos of rank 2 need at least 4 words of runs, 2 are left: the runs are cut short
// RUN: sed -e 's/quant_classes = \[1, 0, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [1, 0, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=CUT
// CUT: quant_classes row 0: a run of combo 1 dim 1 is cut short or negative
// A combo count no class has is refused before anything is allocated per
// combo (2^31 of them ran out of memory).
// RUN: sed -e 's/quant_classes = \[1, 0, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [1, 0, 2, 2, 2, 2147483648, 1, 2, 1, 4, 1, 2, 1, 4]/' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=COMBOS
// RUN: sed -e 's/quant_classes = \[1, 0, 2, 2, 2, 2, 1, 2, 1, 4, 1, 2, 1, 4\]/quant_classes = [1, 0, 2, 2, 2, 2147483648, 1, 2, 1, 4, 1, 2, 1, 4]/' %t/plan.mlir | not reshard-translate --reshard-to-cpp --backend=nccl 2>&1 | FileCheck %s --check-prefix=COMBOS
// COMBOS: quant_classes row 0: 2147483648 combos; a row has its payload class's, and no class has more than {{[0-9]+}}
// RUN: sed -e 's/ quant_tensors = \[0, 1, 1, 0\]//' %t/plan.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=HALF
// HALF: states quant_classes or quant_tensors without the other

// The NCCL backend quantizes with a CUDA kernel: the plan insists on nvcc.
// RUN: reshard-translate --reshard-to-cpp --backend=nccl %t/plan.mlir | FileCheck %s --check-prefix=NCCL
// NCCL: #include "reshard/ExecutionEngine/NcclBackend.h"
// NCCL-NEXT: #if !defined(__CUDACC__)
// NCCL-NEXT: #error "this plan quantizes on the GPU: compile it with nvcc -x cu (CMake: enable_language(CUDA) before reshard_add_plan)"
// NCCL-NEXT: #endif
// RUN: reshard-translate --reshard-to-cpp --backend=mpi %t/plan.mlir | FileCheck %s --check-prefix=MPI
// MPI: const QuantClass kQuantClasses[] = {
// MPI: const QuantTensor kQuantTensors[] = {
// MPI-NEXT: {0, 1, 1, 0},};
// MPI: kQuantClasses, 1, kQuantTensors, 1, kTensorQuant};

// Receiver-side rows: the side flipped to the sender, the payload's rows
// dropped (an fp8e4m3 tensor would then move 2-byte elements for no
// quantizer), runs that are not the destination shard, and a workspace
// without the shadow.
// RUN: reshard-opt %S/../../Conversion/ReshardToRuntime/convert-quantized-receiver.mlir --reshard-plan-pipeline -o %t/recv.mlir
// RUN: sed -e 's/quant_classes = \[1, 1, 2, 4, 2,/quant_classes = [1, 0, 2, 4, 2,/' %t/recv.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=SIDE
// SIDE: quant_tensors[0]: the payload's class must have 1-byte elements and the row's rank and source combos, the scales' class 4-byte elements, both one source mesh
// RUN: sed -e 's/ quant_classes = \[[0-9, ]*\] quant_tensors = \[0, 1, 1, 0\]//' %t/recv.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=WIDE
// WIDE: tensor 0 ('w') of dtype fp8e4m3 is in a class of 2-byte elements but is no payload quantized on its receivers
// RUN: sed -e 's/quant_classes = \[1, 1, 2, 4, 2, 2, 1, 4, 1, 2/quant_classes = [1, 1, 2, 4, 2, 2, 1, 3, 1, 2/' %t/recv.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=DRUNS
// DRUNS: quant_tensors[0]: on destination device 0, dim 0: runs of 3 elements in 1 blocks for a payload shard of 4 and a scales shard of 1
// RUN: sed -e 's/rank 2 workspace = 48/rank 2 workspace = 32/' %t/recv.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=SHADOW
// SHADOW: states a workspace of 32 bytes; its largest step stages 32, the shadows of what it quantizes on receipt 16
// A holder's workspace without its sources' scales (the fused pack holds no
// FP8 copy of the payload, only the scales: 16 bytes).
// RUN: reshard-opt %S/../../Conversion/ReshardToRuntime/convert-quantized.mlir --reshard-plan-pipeline -o %t/send.mlir
// RUN: sed -e 's/rank 0 workspace = 48/rank 0 workspace = 32/' %t/send.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=SCALES
// SCALES: states a workspace of 32 bytes; its largest step stages 32, its quantized sources' scales take 16
// A stream that carries the receiver-side scales (they have no source to
// pack from) is refused.
// RUN: sed -e 's/reshard_rt.items 0 \[g0.p0\[0\]\]/reshard_rt.items 0 [g1.p0[0]]/' %t/recv.mlir | not reshard-opt 2>&1 | FileCheck %s --check-prefix=MOVED
// MOVED: quant_tensors[0]: the scales of a payload quantized on its receivers move nothing, but rank 0 sends them to rank 2
