//===- Pieces.h - Exact intersection of two layouts of a tensor -*- C++ -*-===//
//
// A redistribution is a set of pieces: a box of the global index space, the
// destination rank that needs it and where it lands in that rank's buffer,
// and the source ranks that hold it (all at the same local offset, since
// they differ only on replicated mesh axes). Pieces live in dense tables so
// that a whole model's millions of them stay cheap.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_PIECES_H
#define RESHARD_PLAN_PIECES_H

#include "reshard/Layout/Geometry.h"

#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace reshard {

/// One side of a redistribution: a mesh and a resolved sharding.
struct SideLayout {
  MeshSpec mesh;
  Sharding sharding;

  /// Mesh coordinates of global rank `rank`, or std::nullopt if the rank is
  /// not in the mesh.
  std::optional<llvm::SmallVector<int64_t>> coordsOf(int64_t rank) const;
};

/// Everything needed to plan and execute one tensor's redistribution.
struct TensorLayout {
  std::string name;
  llvm::SmallVector<int64_t> shape;
  int64_t elementBytes = 0;
  SideLayout src, dst;

  ShardGeometry srcGeometry() const {
    return ShardGeometry(shape, src.mesh.shape, src.sharding);
  }
  ShardGeometry dstGeometry() const {
    return ShardGeometry(shape, dst.mesh.shape, dst.sharding);
  }
};

/// The pieces of one redistribution. Row i of `rows` holds, for a tensor of
/// rank r: [dstRank, srcRank, holderGroup, via, step, globalOffset(r),
/// sizes(r), dstOffset(r), srcOffset(r)]. Holder group g lists the source
/// ranks holderRanks[holderOffsets[g] .. holderOffsets[g+1]), ascending.
///
/// `via` is -1 when srcRank sends the box straight to dstRank. Otherwise the
/// box crossed the network once into rank `via`, another destination of the
/// same box in dstRank's NVLink domain, which forwards it from its own
/// destination buffer; `via`'s own piece must run in an earlier step. Steps
/// run in order, each after the previous one has completed.
class PieceTable {
public:
  explicit PieceTable(unsigned rank = 0) : tensorRank(rank) {}

  static constexpr unsigned kFixedColumns = 5;
  static unsigned rowWidth(unsigned rank) { return kFixedColumns + 4 * rank; }

  unsigned rank() const { return tensorRank; }
  size_t size() const { return rows.size() / rowWidth(tensorRank); }
  size_t numHolderGroups() const { return holderOffsets.size() - 1; }

  /// A read-only view of one row.
  struct Piece {
    const int64_t *row;
    unsigned rank;
    int64_t dstRank() const { return row[0]; }
    int64_t srcRank() const { return row[1]; }
    int64_t holderGroup() const { return row[2]; }
    int64_t via() const { return row[3]; }
    int64_t step() const { return row[4]; }
    llvm::ArrayRef<int64_t> globalOffset() const {
      return {row + kFixedColumns, rank};
    }
    llvm::ArrayRef<int64_t> sizes() const {
      return {row + kFixedColumns + rank, rank};
    }
    llvm::ArrayRef<int64_t> dstOffset() const {
      return {row + kFixedColumns + 2 * rank, rank};
    }
    llvm::ArrayRef<int64_t> srcOffset() const {
      return {row + kFixedColumns + 3 * rank, rank};
    }
    int64_t numElements() const {
      int64_t n = 1;
      for (int64_t s : sizes())
        n *= s;
      return n;
    }
  };
  Piece operator[](size_t i) const {
    return {rows.data() + i * rowWidth(tensorRank), tensorRank};
  }
  /// Mutable access to row i, for passes that route and schedule.
  int64_t *row(size_t i) { return rows.data() + i * rowWidth(tensorRank); }
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
                llvm::ArrayRef<int64_t> srcOffset);

  /// Raw storage, for serialisation into IR attributes.
  std::vector<int64_t> rows;
  std::vector<int64_t> holderOffsets = {0};
  std::vector<int64_t> holderRanks;

private:
  unsigned tensorRank;
};

/// Computes the exact pieces of `layout`: every destination rank gets the
/// boxes of its shard, each split where the source partition changes
/// holders. A destination rank that holds a box itself copies it locally
/// (srcRank == dstRank); otherwise srcRank is the lowest holder. Work grows
/// with the pieces produced, never with elements or source x destination.
PieceTable computePieces(const TensorLayout &layout);

} // namespace reshard

#endif // RESHARD_PLAN_PIECES_H
