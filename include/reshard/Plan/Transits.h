//===- Transits.h - Holder streams rerouted through a third GPU -*- C++ -*-===//
//
// Entry and exit through any GPU of an NVLink domain: a holder's stream to
// another domain may pass through a GPU of the receiver's domain (which
// takes it in on its NIC and forwards it over NVLink) or of the sender's
// (which takes it over NVLink and sends it on its NIC), so that a domain's
// traffic spreads over the NICs of all its plan GPUs, not only those of
// the destinations and holders.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_TRANSITS_H
#define RESHARD_PLAN_TRANSITS_H

#include "reshard/Plan/Scheduling.h"

#include "llvm/Support/CommandLine.h"

namespace reshard {

/// Whether reshard-schedule routes holder streams through transits.
enum class TransitMode {
  Auto,   ///< where the cost model finds the plan faster
  Always, ///< wherever balanceNics proposes them and they schedule
  Never,
};

/// The values of a `transits` option (the pass, the pipeline and
/// reshard-compile spell them alike).
inline auto transitModeValues() {
  return llvm::cl::values(
      clEnumValN(TransitMode::Auto, "auto",
                 "where the cost model finds the plan more than 1% faster "
                 "(default)"),
      clEnumValN(TransitMode::Always, "always",
                 "wherever NIC balancing proposes them and every stream can "
                 "run at one pace (for tests)"),
      clEnumValN(TransitMode::Never, "never",
                 "holders' streams go straight to their receivers"));
}

/// Transits that balance each domain's NICs: per domain, while its
/// busiest receiving NIC carries a stream of its own that would leave it
/// and the least loaded NIC both below the busiest's load, that stream
/// (preferring those that keep the least loaded within the domain's mean,
/// then the one whose sender has had the fewest moves, then the largest
/// within the mean, else the smallest) enters
/// through the least loaded GPU instead; then the outgoing streams left
/// without a transit are spread likewise over the sending NICs of their
/// sender's domain. Crossings of a relay tree stay, but load their NICs.
/// `streams` are the plan's without transits; a plan GPU is a rank of any
/// mesh. Sorted by (sender, receiver); empty without a topology.
std::vector<PlanTransit> balanceNics(const PlanModel &model,
                                     const std::vector<StreamContent> &streams);

} // namespace reshard

#endif // RESHARD_PLAN_TRANSITS_H
