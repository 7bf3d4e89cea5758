//===- PlanModule.h - A module's plan, read and written -------*- C++ -*-===//
//
// Passes that decide across the whole model (routing, scheduling, the
// report, the lowering) read the module's layouts, classes, groups and
// schedule into one PlanModel and write their decisions back.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_DIALECT_RESHARD_TRANSFORMS_PLANMODULE_H
#define RESHARD_DIALECT_RESHARD_TRANSFORMS_PLANMODULE_H

#include "reshard/Dialect/Reshard/IR/ReshardOps.h"
#include "reshard/Plan/PlanModel.h"
#include "reshard/Plan/Scheduling.h"

#include "llvm/ADT/StringSet.h"

namespace reshard {

/// The module attribute that carries PlanModel::relayLaneSpan from
/// reshard-select-sources to the schedule and the lowering (absent: 1).
inline constexpr llvm::StringLiteral kRelayLaneSpanAttr =
    "reshard.relay_lane_span";

struct PlanModule {
  PlanModel model;
  /// In plan order: model tensor t is tensors[t].
  llvm::SmallVector<RedistributeOp> tensors;
  llvm::SmallVector<ClassOp> classes; ///< model.classes[i]
  llvm::SmallVector<GroupOp> groups;  ///< model.groups[i]
  ScheduleOp schedule;                ///< null when not scheduled

  /// Reads the planned module; fails with a diagnostic when a tensor is in
  /// no group (the module is not planned yet: `passName` needs it planned)
  /// or the plan is malformed.
  static mlir::FailureOr<PlanModule> load(mlir::ModuleOp module,
                                          llvm::StringRef passName);
  /// Fails with a diagnostic unless the schedule (if any) has exactly the
  /// streams of the current routing.
  mlir::LogicalResult
  checkSchedule(const std::vector<StreamContent> &streams) const;
  /// Writes every group's routing back to its op, and the relay lane span
  /// (when not 1) to the module's kRelayLaneSpanAttr.
  void storeRoutes(mlir::ModuleOp module);
  /// Replaces the schedule op with the model's schedule.
  void storeSchedule(mlir::ModuleOp module);
};

/// PlanModule::checkSchedule on a copy of the plan: touches no op (the
/// report runs it on another thread), so the error goes to `scheduleLoc`.
mlir::LogicalResult
checkScheduleMatches(const PlanModel &model,
                     const std::vector<StreamContent> &streams,
                     mlir::Location scheduleLoc);

/// Adds the classes and groups of every redistribution of `module` (which
/// must have none yet): the work of reshard-intersect.
mlir::LogicalResult intersectModule(mlir::ModuleOp module);

/// The first name `base`N (N = next, next + 1, ...) not in `taken`.
std::string freeSymbolName(const llvm::StringSet<> &taken, llvm::StringRef base,
                           int64_t &next);

} // namespace reshard

#endif // RESHARD_DIALECT_RESHARD_TRANSFORMS_PLANMODULE_H
