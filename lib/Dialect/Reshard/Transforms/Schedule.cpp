//===- Schedule.cpp - The reshard-schedule pass ---------------------------===//
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"

namespace reshard {
#define GEN_PASS_DEF_RESHARDSCHEDULE
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"
} // namespace reshard

using namespace mlir;
using namespace reshard;

namespace {
struct SchedulePass : public reshard::impl::ReshardScheduleBase<SchedulePass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<PlanModule> plan =
        PlanModule::load(getOperation(), getArgument());
    if (failed(plan))
      return signalPassFailure();
    std::vector<TransferGroup> transfers = enumerateTransfers(plan->model);
    std::vector<StreamContent> streams = collectStreams(plan->model, transfers);
    llvm::Expected<PlanSchedule> schedule = schedulePlan(
        plan->model, transfers, streams, {stagingBudget, maxOpsPerStep});
    if (!schedule) {
      emitError(getOperation().getLoc())
          << "reshard-schedule: " << llvm::toString(schedule.takeError());
      return signalPassFailure();
    }
    plan->model.schedule = std::move(*schedule);
    plan->storeSchedule(getOperation());
  }
};
} // namespace
