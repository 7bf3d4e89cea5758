//===- ReshardOps.h - Meshes, topologies, redistributions -------*- C++ -*-===//
#ifndef RESHARD_DIALECT_RESHARD_IR_RESHARDOPS_H
#define RESHARD_DIALECT_RESHARD_IR_RESHARDOPS_H

#include "reshard/Dialect/Reshard/IR/ReshardDialect.h"
#include "reshard/Plan/Pieces.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

#define GET_OP_CLASSES
#include "reshard/Dialect/Reshard/IR/ReshardOps.h.inc"

namespace reshard {

/// The plain-data layout of `op` (its meshes resolved through `symbols`),
/// for the planner and the interpreter. Fails with a diagnostic at `op`
/// when a mesh is missing or the op does not verify.
mlir::FailureOr<TensorLayout>
getTensorLayout(RedistributeOp op, mlir::SymbolTableCollection &symbols);

/// The reshard.pieces op of every planned tensor, by tensor name. A tensor
/// with two tables is an error, reported at the second.
mlir::FailureOr<llvm::StringMap<PiecesOp>> collectPieces(mlir::ModuleOp module);

} // namespace reshard

#endif // RESHARD_DIALECT_RESHARD_IR_RESHARDOPS_H
