//===- RuntimeOps.h - Ops of the reshard_rt dialect -------------*- C++ -*-===//
#ifndef RESHARD_DIALECT_RUNTIME_IR_RUNTIMEOPS_H
#define RESHARD_DIALECT_RUNTIME_IR_RUNTIMEOPS_H

#include "reshard/Dialect/Runtime/IR/RuntimeDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#define GET_OP_CLASSES
#include "reshard/Dialect/Runtime/IR/RuntimeOps.h.inc"

#endif // RESHARD_DIALECT_RUNTIME_IR_RUNTIMEOPS_H
