//===- Intersection.h - Exact pieces of a redistribution --------*- C++ -*-===//
#ifndef RESHARD_PLAN_INTERSECTION_H
#define RESHARD_PLAN_INTERSECTION_H

#include "reshard/Layout/PieceTable.h"
#include "reshard/Layout/TensorLayout.h"

namespace reshard {

/// Computes the exact pieces of `layout`: every destination rank gets the
/// boxes of its shard, each split where the source partition changes
/// holders. A destination rank that holds a box itself copies it locally
/// (srcRank == dstRank); otherwise srcRank is the lowest holder. Work grows
/// with the pieces produced, never with elements or source x destination.
PieceTable computePieces(const TensorLayout &layout);

} // namespace reshard

#endif // RESHARD_PLAN_INTERSECTION_H
