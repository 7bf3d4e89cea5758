//===- SourceSelection.h - Who sends each piece, through whom ---*- C++ -*-===//
#ifndef RESHARD_PLAN_SOURCESELECTION_H
#define RESHARD_PLAN_SOURCESELECTION_H

#include "reshard/Plan/PlanModel.h"

#include "llvm/Support/CommandLine.h"

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
};

/// Whether a domain may be fed a piece by another domain's entries instead
/// of its holders (a relay tree: the holders' domain sends it once for
/// both).
enum class RelayTree {
  Never,
  /// As Bound, unless the plan would then have more streams (its relays in
  /// lanes) than a limit (default kRelayTreeMaxStreams): then as Never.
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
                 "as bound while the plan stays within 2^18 streams "
                 "(default)"),
      clEnumValN(RelayTree::Bound, "bound",
                 "where the holders' NICs would pass the physical bound per "
                 "NIC and a feeder's entries are less loaded"),
      clEnumValN(RelayTree::Always, "always",
                 "wherever a feeder's entries are less loaded (for tests)"));
}

/// The most streams a relay tree may give a plan under RelayTree::Auto by
/// default: a
/// relay tree needs relay lanes (a relay stream per holder that fed a
/// relay), and at 48 bytes a stream 2^18 of them take 12 MiB of the
/// 16 MiB of tables per rank the plan-size goal allows (BENCHMARKS.md).
constexpr int64_t kRelayTreeMaxStreams = int64_t(1) << 18;

/// Routes every group: the decisions where a choice exists (which holder,
/// which entry rank, which feeder domain), greedily largest first over the
/// whole model, so that NIC and NVLink loads balance across tensors. A
/// group's members rotate over the chosen candidates, so a group of many
/// members spreads over all of them; a group of one member is routed as
/// that tensor alone. Returns, where RelayTree::Auto dropped a relay tree
/// because the plan would have more than `maxStreams` streams with it, how
/// many (else 0).
int64_t selectSources(PlanModel &model, SourceStrategy strategy,
                      RelayTree tree = RelayTree::Never,
                      int64_t maxStreams = kRelayTreeMaxStreams);

/// The streams of `model`'s routing with relay lanes (before transits,
/// which reshard-schedule adds).
int64_t streamsWithLanes(PlanModel &model);

} // namespace reshard

#endif // RESHARD_PLAN_SOURCESELECTION_H
