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
    std::string err =
        schedulePlan(plan->tensors, {stagingBudget, maxOpsPerStep});
    if (!err.empty()) {
      emitError(getOperation().getLoc()) << "reshard-schedule: " << err;
      return signalPassFailure();
    }
    plan->store();
    // The lowering hands the budget to the runtime program's verifier.
    getOperation()->setAttr(
        "reshard.staging_budget",
        IntegerAttr::get(IntegerType::get(&getContext(), 64), stagingBudget));
  }
};
} // namespace
