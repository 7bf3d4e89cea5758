//===- ReshardOps.h - Meshes, topologies, redistributions -------*- C++ -*-===//
#ifndef RESHARD_DIALECT_RESHARD_IR_RESHARDOPS_H
#define RESHARD_DIALECT_RESHARD_IR_RESHARDOPS_H

#include "reshard/Dialect/Reshard/IR/ReshardAttrs.h"
#include "reshard/Dialect/Reshard/IR/ReshardDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#define GET_OP_CLASSES
#include "reshard/Dialect/Reshard/IR/ReshardOps.h.inc"

#include "reshard/Dialect/Reshard/IR/ReshardPlanOps.h"

#endif // RESHARD_DIALECT_RESHARD_IR_RESHARDOPS_H
