//===- Expansion.h - A compact plan as explicit pieces ----------*- C++ -*-===//
//
// The enumerating reference path: a tensor's pieces written out one by
// one (one row per destination rank and box, with its sender), as the
// group's routing decides them. The piece interpreter checks these rows
// against the layout, element by element, independently of the lowering.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_EXPANSION_H
#define RESHARD_PLAN_EXPANSION_H

#include "reshard/Layout/PieceTable.h"
#include "reshard/Plan/PlanModel.h"

namespace reshard {

/// The explicit pieces of tensor `tensor`: rows ordered by destination rank
/// (stable in pattern and replica order), holder groups numbered in order
/// of first use. A relayed row has `via` (its entry rank) and step 1.
PieceTable expandPieces(const PlanModel &model, int64_t tensor);

} // namespace reshard

#endif // RESHARD_PLAN_EXPANSION_H
