//===- SourceSelection.h - Who sends each piece, through whom ---*- C++ -*-===//
#ifndef RESHARD_PLAN_SOURCESELECTION_H
#define RESHARD_PLAN_SOURCESELECTION_H

#include "reshard/Plan/PlanModel.h"

#include "llvm/Support/CommandLine.h"

namespace llvm {
class ThreadPoolInterface;
} // namespace llvm

namespace reshard {

enum class SourceStrategy {
  /// Local copy if the destination holds the piece; else a holder in its
  /// NVLink domain; else one network crossing per domain from the holder
  /// with the least loaded NIC, forwarded over NVLink from an entry rank
  /// chosen to balance NIC ingress inside the domain.
  Balanced,
  /// Local copy if the destination holds the piece, else its lowest holder,
  /// no relay: the `direct` baseline.
  Direct,
  /// Not a plan strategy: the report's `gather-broadcast` baseline. The
  /// options accept the name so that choosing it gets an error that says
  /// so (refusedStrategy), not "no such value".
  GatherBroadcast,
};

/// The values of a `strategy` option (the pass, the pipeline and
/// reshard-compile spell them alike).
inline auto sourceStrategyValues() {
  return llvm::cl::values(
      clEnumValN(SourceStrategy::Balanced, "balanced",
                 "local, then NVLink, then one network crossing per NVLink "
                 "domain from the least loaded NIC (default)"),
      clEnumValN(SourceStrategy::Direct, "direct",
                 "the baseline: lowest holder, no relay"),
      clEnumValN(SourceStrategy::GatherBroadcast, "gather-broadcast",
                 "refused: a baseline of the report, not a plan strategy"));
}

/// Why `strategy` cannot plan, or "" when it can.
inline llvm::StringRef refusedStrategy(SourceStrategy strategy) {
  if (strategy != SourceStrategy::GatherBroadcast)
    return "";
  return "strategy=gather-broadcast is a baseline of the report, not a plan "
         "strategy: every plan's report prints its figures beside the plan's "
         "(baselines.gather-broadcast); plan with balanced or direct";
}

/// Whether a domain may be fed a piece by another domain's entries instead
/// of its holders (a relay tree: the holders' domain sends it once for
/// both).
enum class RelayTree {
  Never,
  /// As Bound, unless the plan would then have more streams (its relays in
  /// lanes) than a limit (default kRelayTreeMaxStreams): then with lanes
  /// shared by the holders of a domain or two, else as Never.
  Auto,
  /// Where the holders' NICs would pass the physical bound per NIC and the
  /// feeder's entries are less loaded.
  Bound,
  /// Wherever the feeder's entries are less loaded (for tests).
  Always,
};

/// The values of a `relay-tree` option (the pass, the pipeline and
/// reshard-compile spell them alike).
inline auto relayTreeValues() {
  return llvm::cl::values(
      clEnumValN(RelayTree::Never, "never", "every domain from the holders"),
      clEnumValN(RelayTree::Auto, "auto",
                 "as bound while the plan stays within "
                 "relay-tree-max-streams streams, sharing relay lanes "
                 "between holders if it must (default)"),
      clEnumValN(RelayTree::Bound, "bound",
                 "where the holders' NICs would pass the physical bound per "
                 "NIC and a feeder's entries are less loaded"),
      clEnumValN(RelayTree::Always, "always",
                 "wherever a feeder's entries are less loaded (for tests)"));
}

/// The most streams a relay tree may give a plan under RelayTree::Auto by
/// default: a relay tree needs relay lanes (a relay stream per holder, or
/// block of holders, that fed a relay), and with its row, its share of a
/// body, its receive word and items a stream costs the big plans about 60
/// bytes of tables (Kimi-K2 with feeders in rank order and lanes of 8
/// ranks: 15.3 MB at 269,563 streams; with feeders rotating by group and
/// lanes of 16 ranks 17.2 MB at 280,510), so this many stay within the 16
/// MB of tables per rank the plan-size goal allows (BENCHMARKS.md).
constexpr int64_t kRelayTreeMaxStreams = 270000;

/// How RelayTree::Auto made a relay tree fit `maxStreams` streams.
struct RelayTreeFit {
  /// The plan's streams with a relay lane per holder where they passed
  /// `maxStreams` (else 0: the tree fit as it was, or there was none).
  int64_t perHolderStreams = 0;
  /// Then the lane span taken (PlanModel::relayLaneSpan), with `streams`
  /// streams; 0 where even the widest did not fit and the tree was dropped.
  int64_t laneSpan = 1, streams = 0;
  /// Where feeders rotating with the group did not fit with any span (and
  /// feeders in rank order were tried), the fewest streams they would have
  /// had; else 0.
  int64_t rotatedStreams = 0;
};

/// Relay lane spans RelayTree::Auto tries, narrowest first: a holder, a
/// domain, two domains (Kimi-K2 on DGX: a lane per 4 domains brings the
/// relays' tail back and the plan to where it was without the tree).
llvm::SmallVector<int64_t, 3> relayLaneSpans(const PlanModel &model);

/// Routes every group: the decisions where a choice exists (which holder,
/// which entry rank, which feeder domain), greedily largest first over the
/// whole model, so that NIC and NVLink loads balance across tensors. A
/// group's members rotate over the chosen candidates, so a group of many
/// members spreads over all of them; a group of one member is routed as
/// that tensor alone. With RelayTree::Auto a relay tree whose lanes would
/// pass `maxStreams` streams shares lanes between the holders of a domain
/// or two (setting model.relayLaneSpan), then tries feeders in rank order
/// instead of rotating ones (fewer pairs of feeding and fed entries), else
/// is dropped (routed as Never); the result says which. With
/// `rotateFeeders` the domain a piece's holders serve first (which then
/// feeds the others) rotates with the group; else it is the lowest. With a
/// `pool`, Auto plans feeders in rank order on it while it plans rotating
/// ones (the same result, in the time of one where rotation fits not).
RelayTreeFit selectSources(PlanModel &model, SourceStrategy strategy,
                           RelayTree tree = RelayTree::Never,
                           int64_t maxStreams = kRelayTreeMaxStreams,
                           bool rotateFeeders = true,
                           llvm::ThreadPoolInterface *pool = nullptr);

/// The streams of `model`'s routing with relay lanes of each span of
/// `spans` (before transits, which reshard-schedule adds), from one
/// enumeration of its transfers.
llvm::SmallVector<int64_t, 3> streamsWithLanes(PlanModel &model,
                                               llvm::ArrayRef<int64_t> spans);

} // namespace reshard

#endif // RESHARD_PLAN_SOURCESELECTION_H
