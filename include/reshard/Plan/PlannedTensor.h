//===- PlannedTensor.h - One tensor as the planner sees it ------*- C++ -*-===//
//
// Whole-plan decisions (source selection, scheduling, the cost model) take
// the layouts and piece tables of every tensor at once, so that NIC load is
// balanced across the model, not per tensor. Every stage keeps the tables
// executable (reshard-run checks them at any stage).
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_PLANNEDTENSOR_H
#define RESHARD_PLAN_PLANNEDTENSOR_H

#include "reshard/Layout/PieceTable.h"
#include "reshard/Layout/TensorLayout.h"

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

} // namespace reshard

#endif // RESHARD_PLAN_PLANNEDTENSOR_H
