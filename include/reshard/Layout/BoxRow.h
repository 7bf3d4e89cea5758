//===- BoxRow.h - The box columns of a piece row ----------------*- C++ -*-===//
//
// Piece tables (PieceTable) and class patterns (ClassPattern) store a piece
// as a few fixed columns followed by four blocks of `rank` columns: the
// box's global offset, its sizes, and its offsets in the destination and
// source shards. This view reads those four blocks for both.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_BOXROW_H
#define RESHARD_LAYOUT_BOXROW_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace reshard {

/// A read-only view of one row whose box columns start after `FixedColumns`.
template <unsigned FixedColumns> class BoxRow {
public:
  BoxRow(const int64_t *row, unsigned rank) : row(row), tensorRank(rank) {}
  llvm::ArrayRef<int64_t> globalOffset() const { return dims(0); }
  llvm::ArrayRef<int64_t> sizes() const { return dims(1); }
  llvm::ArrayRef<int64_t> dstOffset() const { return dims(2); }
  llvm::ArrayRef<int64_t> srcOffset() const { return dims(3); }
  int64_t numElements() const {
    int64_t n = 1;
    for (int64_t s : sizes())
      n *= s; // bounded by the tensor's element count
    return n;
  }

protected:
  llvm::ArrayRef<int64_t> dims(unsigned block) const {
    return {row + FixedColumns + block * tensorRank, tensorRank};
  }
  const int64_t *row;
  unsigned tensorRank;
};

} // namespace reshard

#endif // RESHARD_LAYOUT_BOXROW_H
