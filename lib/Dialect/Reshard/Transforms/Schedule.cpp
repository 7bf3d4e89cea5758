//===- Schedule.cpp - The reshard-schedule pass ---------------------------===//
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"
#include "reshard/Plan/Scheduling.h"

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
    if (llvm::Error err =
            schedulePlan(plan->tensors, {stagingBudget, maxOpsPerStep})) {
      emitError(getOperation().getLoc())
          << "reshard-schedule: " << llvm::toString(std::move(err));
      return signalPassFailure();
    }
    plan->store();
    // The lowering hands the budget to the runtime program's verifier.
    ReshardDialect::StagingBudgetAttrHelper(&getContext())
        .setAttr(getOperation(),
                 IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                  stagingBudget));
  }
};
} // namespace
