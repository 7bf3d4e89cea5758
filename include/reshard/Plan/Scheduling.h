//===- Scheduling.h - Streams and their steps -------------------*- C++ -*-===//
//
// Everything one rank sends another in one phase is one stream: the
// transfers of the pair, in enumeration order (a holder's with what its
// receiver forwards first; a relay's: orderRelays), as one sequence of
// bytes.
// A stream runs from a start step at a fixed number of bytes (its quota)
// a step, so that a plan's steps are a few numbers per pair of ranks, not
// a table per piece.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_SCHEDULING_H
#define RESHARD_PLAN_SCHEDULING_H

#include "reshard/Plan/Transfers.h"

#include "llvm/Support/Error.h"

namespace reshard {

/// The transfers of one stream, in the order both ends pack and unpack
/// them (indices into the enumeration), and its bytes.
struct StreamContent {
  int64_t sender, receiver, phase;
  int64_t bytes = 0;
  std::vector<size_t> transfers;
};

/// The streams of `transfers` (copies excluded), sorted by (sender,
/// receiver, phase).
std::vector<StreamContent>
collectStreams(const PlanModel &model,
               const std::vector<TransferGroup> &transfers);

struct ScheduleOptions {
  /// Staging bytes one rank may hold at any instant (a step's packed sends
  /// and receives, the next step's receives where those are posted ahead,
  /// and what a transit keeps).
  int64_t stagingBudget = kDefaultStagingBudget;
  /// Point-to-point operations (distinct peers, sends and receives) one rank
  /// may issue in one step, i.e. in one NCCL group.
  int64_t maxOpsPerStep = 1024;
  /// Each step's next receives are staged while the step is in flight.
  bool receivesAhead = false;
};

/// Assigns every stream a start step and a quota within the budget and the
/// operation bound, so that every rank stays within both in every step
/// (reshard-schedule's description has the rules): all streams at once at
/// one pace (each moves 1/N of its bytes a step) when the operation bound
/// allows, else at most min(K, maxOpsPerStep, stagingBudget) of a rank's K
/// streams at once, each with an equal share, placed longest first at the
/// earliest step where both ends have room. At one pace a relay's stream
/// starts once every item's first byte follows the arrival of what it
/// forwards; otherwise after the relay's last step of phase-0 receives.
/// `streams` are collectStreams(model, transfers).
llvm::Expected<PlanSchedule> schedulePlan(
    const PlanModel &model, const std::vector<TransferGroup> &transfers,
    const std::vector<StreamContent> &streams, const ScheduleOptions &options);

/// Puts every relay stream's transfers in the order what they forward
/// arrives (the step of the last byte that brought them, ties by where
/// that arrival sits in its stream), so that a relay can follow its
/// receives a step behind. The
/// scheduler and everything that walks a stream's bytes (the lowering)
/// call it with the same schedule, so they agree on the order.
void orderRelays(const PlanModel &model,
                 const std::vector<TransferGroup> &transfers,
                 const PlanSchedule &schedule,
                 std::vector<StreamContent> &streams);

/// The schedule of a plan that has none: every phase-0 stream whole in
/// step 0, every relay stream whole in step 1 (relays within a domain in
/// step 2 where relays between domains feed them); no budget.
PlanSchedule trivialSchedule(const PlanModel &model,
                             const std::vector<StreamContent> &streams);

/// The schedule of `model`, or its trivial one.
PlanSchedule scheduleOf(const PlanModel &model,
                        const std::vector<StreamContent> &streams);

} // namespace reshard

#endif // RESHARD_PLAN_SCHEDULING_H
