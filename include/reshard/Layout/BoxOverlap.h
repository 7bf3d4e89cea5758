//===- BoxOverlap.h - An overlapping pair of many boxes ---------*- C++ -*-===//
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
#include <string>
#include <utility>

namespace reshard {

/// A pair (a, b), a < b < n, of boxes that overlap, if any: the least pair
/// up to 64 boxes (compared pairwise), else one found in n log n time when
/// the boxes differ along at most two dims other than those where any two
/// intervals are equal or disjoint (every pattern the planner makes), or
/// when they tile their bounds (every valid plan, up to 2^24 corners: 2M
/// boxes of three such dims); only other patterns of three or more such
/// dims may take quadratic time (see BoxOverlap.cpp).
/// Box i is at offset(i) with extents sizes(i), all of one rank; an empty
/// box holds no element and overlaps nothing.
std::optional<std::pair<size_t, size_t>>
firstOverlap(size_t n,
             llvm::function_ref<llvm::ArrayRef<int64_t>(size_t)> offset,
             llvm::function_ref<llvm::ArrayRef<int64_t>(size_t)> sizes);

/// Why boxes inside a shard of `shardElements` elements do not tile it
/// exactly once: two of them overlap, or they hold another number of
/// elements (`covered`; `more` when past the shard's, where the count
/// stops).
struct TilingFault {
  std::optional<std::pair<size_t, size_t>> overlap;
  int64_t covered = 0;
  bool more = false;

  /// "cover N elements of its S" (or "more than S"), for a count fault.
  std::string describeCount(int64_t shardElements) const {
    return "cover " + std::string(more ? "more than " : "") +
           std::to_string(more ? shardElements : covered) +
           " elements of its " + std::to_string(shardElements);
  }
};

/// The fault of n boxes (as for firstOverlap) that should tile a shard, if
/// any. Too few elements is reported without searching for an overlap,
/// which only boxes that hold enough elements and overlap can make slow.
std::optional<TilingFault>
findTilingFault(size_t n,
                llvm::function_ref<llvm::ArrayRef<int64_t>(size_t)> offset,
                llvm::function_ref<llvm::ArrayRef<int64_t>(size_t)> sizes,
                int64_t shardElements);

} // namespace reshard

#endif // RESHARD_LAYOUT_BOXOVERLAP_H
