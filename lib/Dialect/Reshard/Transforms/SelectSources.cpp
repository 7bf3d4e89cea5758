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
    if (StringRef why = refusedStrategy(strategy); !why.empty()) {
      emitError(getOperation().getLoc()) << "reshard-select-sources: " << why;
      return signalPassFailure();
    }
    FailureOr<PlanModule> plan =
        PlanModule::load(getOperation(), getArgument());
    if (failed(plan))
      return signalPassFailure();
    int64_t maxStreams = relayTreeMaxStreams;
    if (maxStreams < 0) {
      emitError(getOperation().getLoc())
          << "reshard-select-sources: relay-tree-max-streams is " << maxStreams
          << "; it must be at least 0";
      return signalPassFailure();
    }
    // At line 0 of the layout: a remark on a successful compile should not
    // quote the line (a layout JSON may be one line of megabytes).
    Location at = getOperation().getLoc();
    if (auto file = dyn_cast<FileLineColLoc>(at))
      at = FileLineColLoc::get(file.getFilename(), 0, 0);
    MLIRContext &ctx = getContext();
    RelayTreeFit fit = selectSources(
        plan->model, strategy, relayTree, maxStreams, /*rotateFeeders=*/true,
        ctx.isMultithreadingEnabled() ? &ctx.getThreadPool() : nullptr);
    if (fit.rotatedStreams && fit.laneSpan)
      emitRemark(at) << "reshard-select-sources: relay-tree feeders in rank "
                        "order: with feeders rotating by group the plan would "
                        "have "
                     << fit.rotatedStreams << " streams (lanes of "
                     << relayLaneSpans(plan->model).back()
                     << " ranks, before transits), over the " << maxStreams
                     << " relay-tree=auto allows (relay-tree-max-streams)";
    if (fit.perHolderStreams && fit.laneSpan)
      emitRemark(at) << "reshard-select-sources: relay lanes shared by "
                     << fit.laneSpan
                     << " consecutive ranks: with a lane per holder the plan "
                        "would have "
                     << fit.perHolderStreams << " streams, over the "
                     << maxStreams
                     << " relay-tree=auto allows (relay-tree-max-streams); "
                        "it has "
                     << fit.streams << " (before transits)";
    else if (fit.perHolderStreams)
      emitRemark(at)
          << "reshard-select-sources: no relay tree: with one the plan would "
             "have "
          << fit.perHolderStreams << " streams (relay lanes, before transits; "
          << fit.streams << " with lanes of "
          << relayLaneSpans(plan->model).back() << " ranks), over the "
          << maxStreams
          << " relay-tree=auto allows (relay-tree-max-streams; bound keeps it)";
    plan->storeRoutes(getOperation());
    // New routes make new streams: an earlier schedule no longer fits.
    plan->model.schedule.reset();
    plan->storeSchedule(getOperation());
  }
};
} // namespace
