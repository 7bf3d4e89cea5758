//===- Interpreter.h - Execute plans on host memory, check them -*- C++ -*-===//
//
// Runs every rank's part of a plan inside one process, on host buffers:
// the semantic reference that every later stage and backend is checked
// against.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_INTERPRETER_H
#define RESHARD_PLAN_INTERPRETER_H

#include "reshard/Plan/Pieces.h"

#include <map>
#include <string>

namespace reshard {

/// One tensor's local shards, by global rank (dense row-major bytes).
using ShardBuffers = std::map<int64_t, std::vector<uint8_t>>;

/// Local shape of every rank of one side (rank -> shape).
std::map<int64_t, llvm::SmallVector<int64_t>>
localShapes(const TensorLayout &layout, bool source);

/// Checks that every row names ranks of the right meshes, a source that
/// holds the box, and boxes inside the global shape and both local
/// buffers. Returns an error message, or "" when the table is sound.
std::string validatePieces(const TensorLayout &layout, const PieceTable &table);

/// Copies every piece from `src` to `dst` (which must hold every rank's
/// buffer at its local size). Validates first; returns an error message or "".
std::string executePieces(const TensorLayout &layout, const PieceTable &table,
                          const ShardBuffers &src, ShardBuffers &dst);

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

/// Compares every destination element with its check pattern, using the
/// element-by-element reference layout (Reference.h). Returns the number of
/// mismatches and records the first `maxReported` of them.
int64_t checkDestination(const TensorLayout &layout, const ShardBuffers &dst,
                         std::vector<Mismatch> &reported,
                         size_t maxReported = 10,
                         CheckPattern pattern = CheckPattern::Hash);

} // namespace reshard

#endif // RESHARD_PLAN_INTERPRETER_H
