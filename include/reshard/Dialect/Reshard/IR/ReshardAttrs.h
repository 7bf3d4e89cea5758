//===- ReshardAttrs.h - Sharding attributes ---------------------*- C++ -*-===//
#ifndef RESHARD_DIALECT_RESHARD_IR_RESHARDATTRS_H
#define RESHARD_DIALECT_RESHARD_IR_RESHARDATTRS_H

#include "reshard/Dialect/Reshard/IR/ReshardDialect.h"
#include "reshard/Layout/Layout.h"

#include "mlir/IR/BuiltinAttributes.h"

#include "reshard/Dialect/Reshard/IR/ReshardEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "reshard/Dialect/Reshard/IR/ReshardAttrs.h.inc"

#endif // RESHARD_DIALECT_RESHARD_IR_RESHARDATTRS_H
