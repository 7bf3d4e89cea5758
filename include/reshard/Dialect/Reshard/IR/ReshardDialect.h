//===- ReshardDialect.h - The reshard dialect -------------------*- C++ -*-===//
#ifndef RESHARD_DIALECT_RESHARD_IR_RESHARDDIALECT_H
#define RESHARD_DIALECT_RESHARD_IR_RESHARDDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/Operation.h"

#include "reshard/Dialect/Reshard/IR/ReshardDialect.h.inc"

namespace reshard {

/// Bytes per element of a type a redistribution can move, or std::nullopt.
std::optional<int64_t> getElementTypeBytes(mlir::Type type);

/// The interchange dtype name of an element type a redistribution can move
/// (`bf16`, `uint8`, ...), or an empty string.
llvm::StringRef getDtypeName(mlir::Type type);

/// The MLIR element type of an interchange dtype name (`bf16`, `uint8`, ...).
mlir::Type getElementTypeForDtype(mlir::MLIRContext *ctx,
                                  llvm::StringRef dtype);

} // namespace reshard

#endif // RESHARD_DIALECT_RESHARD_IR_RESHARDDIALECT_H
