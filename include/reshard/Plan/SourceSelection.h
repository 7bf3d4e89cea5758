//===- SourceSelection.h - Who sends each piece, through whom ---*- C++ -*-===//
#ifndef RESHARD_PLAN_SOURCESELECTION_H
#define RESHARD_PLAN_SOURCESELECTION_H

#include "reshard/Plan/PlannedTensor.h"

namespace reshard {

enum class SourceStrategy {
  /// Local copy if the destination holds the box; else a holder in its
  /// NVLink domain; else one network crossing per domain from the holder
  /// with the least loaded NIC, forwarded over NVLink from an entry rank
  /// chosen to balance NIC ingress inside the domain.
  Balanced,
  /// Local copy if the destination holds the box, else its lowest holder,
  /// no relay: the `direct` baseline.
  Direct,
};

/// Chooses who sends every piece (srcRank, via) and resets steps to the
/// trivial schedule: direct pieces in step 0, relay forwards in step 1.
void selectSources(llvm::MutableArrayRef<PlannedTensor> tensors,
                   SourceStrategy strategy);

} // namespace reshard

#endif // RESHARD_PLAN_SOURCESELECTION_H
