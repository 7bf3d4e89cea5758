//===- CheckPattern.h - Fill sources, check every destination ---*- C++ -*-===//
//
// What the element checks put in each source element and expect in each
// destination element, by the element's global index. Which element a
// device holds comes from the element-by-element oracle (LayoutOracle.h),
// never from the planner's geometry.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_REFERENCE_CHECKPATTERN_H
#define RESHARD_REFERENCE_CHECKPATTERN_H

#include "reshard/Layout/TensorLayout.h"
#include "reshard/Reference/ShardBuffers.h"

namespace reshard {

/// What the check fills each source element with, from its global row-major
/// linear index, truncated to the element size (little-endian):
///   Index  the index itself (uint32 for 4-byte types, the low 16 or 8 bits
///          for 2- and 1-byte types, uint64 for 8-byte types): readable, but
///          an element moved by a multiple of 2^8 or 2^16 elements passes;
///   Hash   splitmix64's finalizer of the index, so that a misplaced element
///          shows whatever the distance it moved.
enum class CheckPattern { Index, Hash };

uint64_t checkPattern(int64_t globalLinearIndex, int64_t elementBytes,
                      CheckPattern pattern = CheckPattern::Hash);

/// Buffers of every rank of one side, filled with the check pattern of each
/// element (source) or with its bitwise complement (destination, so that an
/// element nobody writes cannot pass).
ShardBuffers makeCheckBuffers(const TensorLayout &layout, bool source,
                              CheckPattern pattern = CheckPattern::Hash);

/// One destination element that does not hold its check pattern.
struct Mismatch {
  int64_t rank;
  int64_t localLinearIndex;
  llvm::SmallVector<int64_t> globalIndex;
  uint64_t expected, actual;
};

/// Compares every destination element with its check pattern. Returns the
/// number of mismatches and records the first `maxReported` of them.
int64_t checkDestination(const TensorLayout &layout, const ShardBuffers &dst,
                         std::vector<Mismatch> &reported,
                         size_t maxReported = 10,
                         CheckPattern pattern = CheckPattern::Hash);

} // namespace reshard

#endif // RESHARD_REFERENCE_CHECKPATTERN_H
