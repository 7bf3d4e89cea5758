//===- RuntimeDialect.h - The reshard_rt dialect ----------------*- C++ -*-===//
#ifndef RESHARD_DIALECT_RUNTIME_IR_RUNTIMEDIALECT_H
#define RESHARD_DIALECT_RUNTIME_IR_RUNTIMEDIALECT_H

#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "reshard/Dialect/Runtime/IR/RuntimeDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "reshard/Dialect/Runtime/IR/RuntimeAttrs.h.inc"

#endif // RESHARD_DIALECT_RUNTIME_IR_RUNTIMEDIALECT_H
