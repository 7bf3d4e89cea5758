//===- BoxOverlap.h - The first overlapping pair of many boxes --*- C++ -*-===//
//
// Both dialects check that the pieces of a destination shard arrive once
// each: no two of its boxes overlap. A shard may get a piece from each of
// 100,000 source ranks, so the pairs are not all compared.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_BOXOVERLAP_H
#define RESHARD_LAYOUT_BOXOVERLAP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

namespace reshard {

/// The least pair (a, b), a < b < n, of boxes that overlap, if any. Box i
/// is at offset(i) with extents sizes(i), all of one rank. Up to 64 boxes
/// are compared pairwise. Otherwise, when along each dim any two boxes'
/// intervals are equal or disjoint (the cells of a grid: intersections of
/// two partitions), boxes overlap only when they are the same cell, found
/// by sorting; other patterns are swept along dim 0.
std::optional<std::pair<size_t, size_t>>
firstOverlap(size_t n,
             llvm::function_ref<llvm::ArrayRef<int64_t>(size_t)> offset,
             llvm::function_ref<llvm::ArrayRef<int64_t>(size_t)> sizes);

} // namespace reshard

#endif // RESHARD_LAYOUT_BOXOVERLAP_H
