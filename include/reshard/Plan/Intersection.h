//===- Intersection.h - A tensor class's exact pieces -----------*- C++ -*-===//
#ifndef RESHARD_PLAN_INTERSECTION_H
#define RESHARD_PLAN_INTERSECTION_H

#include "reshard/Layout/ClassPattern.h"
#include "reshard/Layout/TensorLayout.h"

namespace reshard {

/// The pieces of `layout`'s class in mesh coordinates (its mesh ranks play
/// no part): every destination combo's shard cut into boxes where the
/// source partition changes combos. Work is per dim on intervals and grows
/// with the pieces of one class, never with elements, ranks or tensors.
ClassPattern computeClassPattern(const TensorLayout &layout);

} // namespace reshard

#endif // RESHARD_PLAN_INTERSECTION_H
