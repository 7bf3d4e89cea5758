//===- PlanModule.h - A module's piece tables as plain data -----*- C++ -*-===//
//
// Passes that decide across the whole model (routing, scheduling, the
// report) read every tensor's layout and table at once and write the tables
// back.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_DIALECT_RESHARD_TRANSFORMS_PLANMODULE_H
#define RESHARD_DIALECT_RESHARD_TRANSFORMS_PLANMODULE_H

#include "reshard/Dialect/Reshard/IR/ReshardOps.h"
#include "reshard/Plan/PlannedTensor.h"

namespace reshard {

struct PlanModule {
  llvm::SmallVector<RedistributeOp> ops;
  llvm::SmallVector<PiecesOp> pieces;
  std::vector<PlannedTensor> tensors;

  /// Reads every redistribution with its table and topology; fails with a
  /// diagnostic when a tensor has no table (it is not planned yet).
  static mlir::FailureOr<PlanModule> load(mlir::ModuleOp module,
                                          llvm::StringRef passName);
  /// Writes the (possibly changed) tables back into the pieces ops.
  void store();
};

} // namespace reshard

#endif // RESHARD_DIALECT_RESHARD_TRANSFORMS_PLANMODULE_H
