//===- PieceTable.h - The pieces of one redistribution as data -*- C++ -*-===//
//
// A redistribution is a set of pieces: a box of the global index space, the
// destination rank that needs it and where it lands in that rank's buffer,
// and the source ranks that hold it (all at the same local offset, since
// they differ only on replicated mesh axes). Pieces live in one dense table
// so that a whole model's millions of them stay cheap. This header owns the
// table's schema: the `reshard.pieces` op stores these arrays as they are.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_PIECETABLE_H
#define RESHARD_LAYOUT_PIECETABLE_H

#include "reshard/Layout/BoxRow.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace reshard {

/// The pieces of one redistribution. Each piece is one row of
/// `rowWidth(rank)` integers for a tensor of rank r:
///   dstRank, srcRank, holderGroup, via, step,
///   globalOffset[r], sizes[r], dstOffset[r], srcOffset[r].
/// Holder group g lists the source ranks
/// holderRanks[holderOffsets[g] .. holderOffsets[g+1]), ascending.
///
/// `via` is -1 when srcRank sends the box straight to dstRank. Otherwise the
/// box crossed the network once into rank `via`, another destination of the
/// same box in dstRank's NVLink domain, which forwards it from its own
/// destination buffer; `via`'s own piece must run in an earlier step. Steps
/// run in order, each after the previous one has completed.
class PieceTable {
  static constexpr unsigned kFixedColumns = 5;

public:
  explicit PieceTable(unsigned rank = 0) : tensorRank(rank) {}

  static unsigned rowWidth(unsigned rank) { return kFixedColumns + 4 * rank; }

  unsigned rank() const { return tensorRank; }
  size_t size() const { return rows.size() / rowWidth(tensorRank); }
  size_t numHolderGroups() const { return holderOffsets.size() - 1; }

  /// A read-only view of one row.
  class Piece : public BoxRow<kFixedColumns> {
  public:
    using BoxRow::BoxRow;
    int64_t dstRank() const { return row[0]; }
    int64_t srcRank() const { return row[1]; }
    int64_t holderGroup() const { return row[2]; }
    int64_t via() const { return row[3]; }
    int64_t step() const { return row[4]; }
    /// The rank that sends this piece: its relay, or else its source.
    int64_t sender() const { return via() == -1 ? srcRank() : via(); }
    /// A copy inside one rank (no message).
    bool isLocalCopy() const { return via() == -1 && srcRank() == dstRank(); }
  };

  /// One row, with the routing and scheduling columns writable.
  class MutablePiece : public Piece {
  public:
    MutablePiece(int64_t *row, unsigned rank)
        : Piece(row, rank), writable(row) {}
    void setSrcRank(int64_t r) const { writable[1] = r; }
    void setVia(int64_t r) const { writable[3] = r; }
    void setStep(int64_t s) const { writable[4] = s; }

  private:
    int64_t *writable;
  };

  Piece operator[](size_t i) const {
    return {rows.data() + i * rowWidth(tensorRank), tensorRank};
  }
  MutablePiece operator[](size_t i) {
    return {rows.data() + i * rowWidth(tensorRank), tensorRank};
  }
  llvm::ArrayRef<int64_t> holders(int64_t group) const {
    return llvm::ArrayRef<int64_t>(holderRanks)
        .slice(holderOffsets[group],
               holderOffsets[group + 1] - holderOffsets[group]);
  }

  /// Appends a holder group (ascending ranks) and returns its index.
  int64_t addHolderGroup(llvm::ArrayRef<int64_t> ranks);
  /// Appends one piece, sent straight (via = -1) in step 0.
  void addPiece(int64_t dstRank, int64_t srcRank, int64_t holderGroup,
                llvm::ArrayRef<int64_t> globalOffset,
                llvm::ArrayRef<int64_t> sizes,
                llvm::ArrayRef<int64_t> dstOffset,
                llvm::ArrayRef<int64_t> srcOffset, int64_t via = -1,
                int64_t step = 0);
  /// Orders the rows by destination rank, keeping the order within each.
  void sortByDestination();

  /// Raw storage, for serialisation into IR attributes.
  std::vector<int64_t> rows;
  std::vector<int64_t> holderOffsets = {0};
  std::vector<int64_t> holderRanks;

private:
  unsigned tensorRank;
};

} // namespace reshard

#endif // RESHARD_LAYOUT_PIECETABLE_H
