//===- Scheduling.h - Steps within a staging budget -------------*- C++ -*-===//
#ifndef RESHARD_PLAN_SCHEDULING_H
#define RESHARD_PLAN_SCHEDULING_H

#include "reshard/Plan/PlannedTensor.h"

#include "llvm/Support/Error.h"

namespace reshard {

struct ScheduleOptions {
  /// Staging bytes one rank may use in one step (packed sends plus receives).
  int64_t stagingBudget = kDefaultStagingBudget;
  /// Point-to-point operations (distinct peers, sends and receives) one rank
  /// may issue in one step, i.e. in one NCCL group.
  int64_t maxOpsPerStep = 1024;
};

/// Splits pieces larger than the staging budget and assigns steps: every
/// rank stays within the budget and the operation bound in every step, and
/// a relay forwards a box only in a step after it received it.
llvm::Error schedulePlan(llvm::MutableArrayRef<PlannedTensor> tensors,
                         const ScheduleOptions &options);

} // namespace reshard

#endif // RESHARD_PLAN_SCHEDULING_H
