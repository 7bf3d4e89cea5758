//===- ReshardPlanOps.h - Classes, groups, schedules, pieces ----*- C++ -*-===//
#ifndef RESHARD_DIALECT_RESHARD_IR_RESHARDPLANOPS_H
#define RESHARD_DIALECT_RESHARD_IR_RESHARDPLANOPS_H

#include "reshard/Dialect/Reshard/IR/ReshardAttrs.h"
#include "reshard/Dialect/Reshard/IR/ReshardDialect.h"
#include "reshard/Layout/ClassPattern.h"
#include "reshard/Layout/PieceTable.h"
#include "reshard/Layout/PlanRows.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#define GET_OP_CLASSES
#include "reshard/Dialect/Reshard/IR/ReshardPlanOps.h.inc"

#endif // RESHARD_DIALECT_RESHARD_IR_RESHARDPLANOPS_H
