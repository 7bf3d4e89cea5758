//===- Schedule.cpp - The reshard-schedule pass ---------------------------===//
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"
#include "reshard/Plan/CostModel.h"

namespace reshard {
#define GEN_PASS_DEF_RESHARDSCHEDULE
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"
} // namespace reshard

using namespace mlir;
using namespace reshard;

namespace {
/// Relay lanes are tried when the relays' tail is more than this share of
/// the steps, and chosen when they shorten the modelled time by more.
constexpr double kLaneGain = 0.01;
/// Transits are kept when they shorten the modelled time by more than
/// this. The model charges each link its bytes; flows sharing links
/// fairly lose a little more where a transit doubles a message (it joins
/// the transit's own message to the same peer): the fluid replay took M2N
/// DeepSeek-V3 with transits=always 0.9% longer than modelled (1.047
/// against 1.038 of the bound; M2N Qwen3-235B's transits 1.029 against
/// 1.028, BENCHMARKS.md §7).
constexpr double kTransitGain = 0.01;

/// A plan scheduled with or without relay lanes and transits.
struct Attempt {
  bool lanes = false;
  std::vector<PlanTransit> transits;
  int64_t relayTail = 0, steps = 0;
  std::vector<TransferGroup> transfers;
  std::vector<StreamContent> streams;
  PlanSchedule schedule;
};

struct SchedulePass : public reshard::impl::ReshardScheduleBase<SchedulePass> {
  using Base::Base;
  void runOnOperation() override {
    FailureOr<PlanModule> plan =
        PlanModule::load(getOperation(), getArgument());
    if (failed(plan))
      return signalPassFailure();
    // Relays forward in one stream per receiver, or in lanes (one per
    // holder that fed them) where the cost model says that is faster by
    // more than kLaneGain: lanes cost plan size (a relay transfer per
    // holder).
    plan->model.transits.clear();
    auto attempt = [&](bool lanes) -> llvm::Expected<Attempt> {
      plan->model.relayLanes = lanes;
      Attempt a;
      a.lanes = lanes;
      a.transits = plan->model.transits;
      a.transfers = enumerateTransfers(plan->model);
      a.streams = collectStreams(plan->model, a.transfers);
      llvm::Expected<PlanSchedule> schedule =
          schedulePlan(plan->model, a.transfers, a.streams,
                       {stagingBudget, maxOpsPerStep, receivesAhead});
      if (!schedule)
        return schedule.takeError();
      a.schedule = std::move(*schedule);
      // The relays' tail: the steps they run after the last phase-0 step.
      int64_t lastDirect = 0, lastRelay = 0;
      for (size_t i = 0; i < a.streams.size(); ++i) {
        const PlanStream &r = a.schedule.streams[i];
        int64_t end = r.start + streamSteps(a.streams[i].bytes, r.quota);
        int64_t &last = isRelay(r.phase) ? lastRelay : lastDirect;
        last = std::max(last, end);
      }
      a.relayTail = lastRelay - lastDirect;
      a.steps = std::max(lastDirect, lastRelay);
      return a;
    };
    auto seconds = [&](const Attempt &a) {
      plan->model.relayLanes = a.lanes;
      plan->model.transits = a.transits;
      return planFigures(plan->model, a.transfers, a.streams, a.schedule)
          .estimatedSeconds;
    };
    // A relay tree needs lanes to keep pace (a feeder's entry forwards
    // what many holders send it at once): such a plan is tried with them
    // first, and without only where they do not fit.
    bool fed = plan->model.hasRelayTree();
    llvm::Expected<Attempt> chosen = attempt(fed);
    if (fed && !chosen) {
      llvm::consumeError(chosen.takeError());
      chosen = attempt(false);
    }
    // Lanes can only shorten a relay tail; without one of more than
    // kLaneGain of the steps the plan stays as small as it is.
    if (chosen && !fed && chosen->relayTail > 1 &&
        chosen->relayTail > kLaneGain * chosen->steps) {
      llvm::Expected<Attempt> lanes = attempt(true);
      if (!lanes) // lanes do not fit the bounds: one stream per receiver
        llvm::consumeError(lanes.takeError());
      else if (seconds(*lanes) < seconds(*chosen) * (1 - kLaneGain))
        chosen = std::move(lanes);
    }
    // Transits where some NIC carries more than another of its domain by
    // a stream's size, kept when they shorten the plan by more than
    // kTransitGain: they cost an NVLink hop, a step of carry and, in a
    // fairly shared network, more than the model charges.
    // A module routed `direct` is the direct plan: no transits unless
    // asked for (`always`).
    bool direct = !plan->model.groups.empty() &&
                  llvm::all_of(plan->model.groups, [](const PlanGroup &g) {
                    return g.routing == GroupRouting::Direct;
                  });
    if (chosen && (transits == TransitMode::Always ||
                   (transits == TransitMode::Auto && !direct))) {
      plan->model.relayLanes = chosen->lanes;
      plan->model.transits = balanceNics(plan->model, chosen->streams);
      if (!plan->model.transits.empty()) {
        llvm::Expected<Attempt> through = attempt(chosen->lanes);
        if (!through) // the budget or the bound needs the other schedule
          llvm::consumeError(through.takeError());
        else if (transits == TransitMode::Always ||
                 seconds(*through) < seconds(*chosen) * (1 - kTransitGain))
          chosen = std::move(through);
      }
    }
    if (!chosen) {
      emitError(getOperation().getLoc())
          << "reshard-schedule: " << llvm::toString(chosen.takeError());
      return signalPassFailure();
    }
    plan->model.relayLanes = chosen->lanes;
    plan->model.transits = chosen->transits;
    plan->model.schedule = std::move(chosen->schedule);
    plan->storeSchedule(getOperation());
  }
};
} // namespace
