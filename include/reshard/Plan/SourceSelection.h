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
      clEnumValN(RelayTree::Never, "never",
                 "every domain from the holders (default)"),
      clEnumValN(RelayTree::Bound, "bound",
                 "where the holders' NICs would pass the physical bound per "
                 "NIC and a feeder's entries are less loaded"),
      clEnumValN(RelayTree::Always, "always",
                 "wherever a feeder's entries are less loaded (for tests)"));
}

/// Routes every group: the decisions where a choice exists (which holder,
/// which entry rank, which feeder domain), greedily largest first over the
/// whole model, so that NIC and NVLink loads balance across tensors. A
/// group's members rotate over the chosen candidates, so a group of many
/// members spreads over all of them; a group of one member is routed as
/// that tensor alone.
void selectSources(PlanModel &model, SourceStrategy strategy,
                   RelayTree tree = RelayTree::Never);

} // namespace reshard

#endif // RESHARD_PLAN_SOURCESELECTION_H
