//===- Routing.h - Source selection, relays, schedules, cost ----*- C++ -*-===//
//
// Whole-plan decisions on the piece tables of every tensor at once: NIC load
// is balanced across the model, not per tensor. Every function keeps the
// tables executable (reshard-run checks them at any stage).
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_ROUTING_H
#define RESHARD_PLAN_ROUTING_H

#include "reshard/Plan/Pieces.h"

#include <string>

namespace reshard {

/// One tensor of a plan: its layout, its pieces, and where its ranks sit.
struct PlannedTensor {
  TensorLayout layout;
  PieceTable table;
  /// Rank r is in NVLink domain r / nvlDomainSize; without a topology every
  /// rank is a domain of its own (everything between ranks is network).
  std::optional<TopologySpec> topology;

  int64_t domainOf(int64_t rank) const {
    return topology ? rank / topology->nvlDomainSize : rank;
  }
  int64_t pieceBytes(size_t i) const {
    return table[i].numElements() * layout.elementBytes;
  }
};

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

struct ScheduleOptions {
  /// Staging bytes one rank may use in one step (packed sends plus receives).
  int64_t stagingBudget = int64_t(1) << 30;
  /// Point-to-point operations (distinct peers, sends and receives) one rank
  /// may issue in one step, i.e. in one NCCL group.
  int64_t maxOpsPerStep = 1024;
};

/// Splits pieces larger than the staging budget and assigns steps: every
/// rank stays within the budget and the operation bound in every step, and
/// a relay forwards a box only in a step after it received it. Returns an
/// error message, or "" on success.
std::string schedulePlan(llvm::MutableArrayRef<PlannedTensor> tensors,
                         const ScheduleOptions &options);

} // namespace reshard

#endif // RESHARD_PLAN_ROUTING_H
