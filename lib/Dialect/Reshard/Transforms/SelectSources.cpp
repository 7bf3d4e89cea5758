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
    SourceStrategy s;
    if (strategy == "balanced") {
      s = SourceStrategy::Balanced;
    } else if (strategy == "direct") {
      s = SourceStrategy::Direct;
    } else {
      InFlightDiagnostic diag = emitError(getOperation().getLoc())
                                << "reshard-select-sources: unknown strategy '"
                                << strategy << "'; use balanced or direct";
      if (strategy == "gather-broadcast")
        diag << " (gather-broadcast is a baseline: reshard-report prints its "
                "figures beside the plan's, computed from the same pieces)";
      return signalPassFailure();
    }
    FailureOr<PlanModule> plan =
        PlanModule::load(getOperation(), getArgument());
    if (failed(plan))
      return signalPassFailure();
    selectSources(plan->tensors, s);
    plan->store();
  }
};
} // namespace
