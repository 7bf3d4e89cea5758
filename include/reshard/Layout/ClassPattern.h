//===- ClassPattern.h - A class's pieces in mesh coordinates --*- C++ -*-===//
//
// Tensors that share shape, element type, both shardings and both mesh
// shapes (a class) have the same pieces in mesh coordinates, whatever ranks
// their meshes list: in a MoE model tens of thousands of tensors share a
// handful of patterns. This header owns the pattern's schema; the
// `reshard.class` op stores these rows as they are.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_CLASSPATTERN_H
#define RESHARD_LAYOUT_CLASSPATTERN_H

#include "reshard/Layout/BoxRow.h"
#include "reshard/Layout/Layout.h"

#include <vector>

namespace reshard {

/// The axes of a mesh split into those a sharding uses (they choose which
/// data a device holds) and those it leaves out (they replicate). A *combo*
/// is the row-major index of a device's coordinates on the used axes, in
/// mesh axis order; the devices of one combo hold the same shard.
class MeshAxisSplit {
public:
  MeshAxisSplit(llvm::ArrayRef<int64_t> meshShape, const Sharding &sharding);

  llvm::ArrayRef<int64_t> meshShape() const { return shape; }
  int64_t numDevices() const;
  int64_t numCombos() const { return countOf(sharded); }
  int64_t numReplicas() const { return countOf(replicated); }
  /// The combo of the device at mesh linear index `linear`.
  int64_t comboOf(int64_t linear) const;
  /// The mesh linear index of replica `replica` (row-major over the
  /// unused axes) of combo `combo`.
  int64_t deviceOf(int64_t combo, int64_t replica) const;
  /// Mesh coordinates of a device of `combo` (unused axes at 0).
  llvm::SmallVector<int64_t> coordsOf(int64_t combo) const;
  /// Mesh coordinates on the used axes from `linearCoords`, as a combo.
  int64_t comboOfCoords(llvm::ArrayRef<int64_t> coords) const;
  /// The axes `dimAxes` (a subset of the used ones) of `combo`, linearised
  /// over those axes: the owner index the intersection works with.
  int64_t ownerOf(int64_t combo, llvm::ArrayRef<unsigned> dimAxes) const;

private:
  int64_t countOf(llvm::ArrayRef<unsigned> axes) const;
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<unsigned> sharded, replicated;
};

/// The pieces of a tensor class. Each piece is one row of `rowWidth(rank)`
/// integers for a tensor of rank r:
///   dstCombo, srcCombo,
///   globalOffset[r], sizes[r], dstOffset[r], srcOffset[r].
/// Every destination device of combo `dstCombo` needs the global box
/// [globalOffset, globalOffset + sizes) at `dstOffset` of its shard; every
/// source device of combo `srcCombo` holds it at `srcOffset`. Rows are
/// ordered by destination combo, and within one combo in the product order
/// of the per-dim overlaps, so the pieces of one combo tile its shard.
class ClassPattern {
  static constexpr unsigned kFixedColumns = 2;

public:
  explicit ClassPattern(unsigned rank = 0) : tensorRank(rank) {}

  static unsigned rowWidth(unsigned rank) { return kFixedColumns + 4 * rank; }
  unsigned rank() const { return tensorRank; }
  size_t size() const { return rows.size() / rowWidth(tensorRank); }

  class Piece : public BoxRow<kFixedColumns> {
  public:
    using BoxRow::BoxRow;
    int64_t dstCombo() const { return row[0]; }
    int64_t srcCombo() const { return row[1]; }
  };

  Piece operator[](size_t i) const {
    return {rows.data() + i * rowWidth(tensorRank), tensorRank};
  }

  void addPiece(int64_t dstCombo, int64_t srcCombo,
                llvm::ArrayRef<int64_t> globalOffset,
                llvm::ArrayRef<int64_t> sizes,
                llvm::ArrayRef<int64_t> dstOffset,
                llvm::ArrayRef<int64_t> srcOffset);

  /// Raw storage, for serialisation into IR attributes.
  std::vector<int64_t> rows;

private:
  unsigned tensorRank;
};

} // namespace reshard

#endif // RESHARD_LAYOUT_CLASSPATTERN_H
