//===- SelectSources.cpp - The reshard-select-sources pass ----------------===//
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"

namespace reshard {
#define GEN_PASS_DEF_RESHARDSELECTSOURCES
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"
} // namespace reshard

using namespace mlir;
using namespace reshard;

namespace {
struct SelectSourcesPass
    : public reshard::impl::ReshardSelectSourcesBase<SelectSourcesPass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<PlanModule> plan =
        PlanModule::load(getOperation(), getArgument());
    if (failed(plan))
      return signalPassFailure();
    selectSources(plan->model, strategy, relayTree);
    plan->storeRoutes();
    // New routes make new streams: an earlier schedule no longer fits.
    plan->model.schedule.reset();
    plan->storeSchedule(getOperation());
  }
};
} // namespace
