//===- Geometry.h - Which global elements a device holds --------*- C++ -*-===//
//
// The normative chunking of docs/Layout.md: nested torch.chunk per dim, blocks
// chunked one by one and concatenated locally, replication over unused axes.
// Everything is computed per dim on intervals, never per element.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_GEOMETRY_H
#define RESHARD_LAYOUT_GEOMETRY_H

#include "reshard/Layout/Layout.h"

#include <vector>

namespace reshard {

/// A half-open range [begin, end) of indices along one dim.
struct Interval {
  int64_t begin = 0;
  int64_t end = 0;
  int64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
  bool operator==(const Interval &o) const {
    return begin == o.begin && end == o.end;
  }
  bool operator!=(const Interval &o) const { return !(*this == o); }
};

/// The part of [0, n) given to the device at `coords` when [0, n) is split
/// over mesh axes of `sizes` (major to minor) as nested torch.chunk does:
/// chunks of ceil(len / size) each, the last ones shorter or empty.
Interval chunkInterval(int64_t n, llvm::ArrayRef<int64_t> sizes,
                       llvm::ArrayRef<int64_t> coords);

/// Steps the row-major multi-index `idx` (dim d counts up to extent(d)).
/// Returns false once every combination has been visited.
inline bool nextIndex(llvm::MutableArrayRef<size_t> idx,
                      llvm::function_ref<size_t(unsigned)> extent) {
  for (int d = static_cast<int>(idx.size()) - 1; d >= 0; --d) {
    if (++idx[d] < extent(d))
      return true;
    idx[d] = 0;
  }
  return false;
}

/// A non-empty run of a device's extent along one dim: global indices
/// [globalBegin, globalBegin + size) stored from local index localBegin.
struct DimSegment {
  int64_t globalBegin = 0;
  int64_t size = 0;
  int64_t localBegin = 0;
  bool operator==(const DimSegment &o) const {
    return globalBegin == o.globalBegin && size == o.size &&
           localBegin == o.localBegin;
  }
};

/// Maps runs of a dim in stored coordinates (`globalBegin` a stored index)
/// to logical ones through a storage order, in local order: a run that
/// crosses order runs splits; neighbours contiguous in both stay one.
llvm::SmallVector<DimSegment> toLogical(llvm::ArrayRef<DimSegment> stored,
                                        llvm::ArrayRef<OrderRun> order);

/// A box of the global index space held by a device, and where its first
/// element sits in the device's local buffer.
struct HeldBox {
  llvm::SmallVector<int64_t> globalOffset;
  llvm::SmallVector<int64_t> sizes;
  llvm::SmallVector<int64_t> localOffset;
};

/// The shards of one tensor of a given global shape laid out on a mesh.
class ShardGeometry {
public:
  ShardGeometry(llvm::ArrayRef<int64_t> shape,
                llvm::ArrayRef<int64_t> meshShape, const Sharding &sharding);

  unsigned rank() const { return shape.size(); }
  llvm::ArrayRef<int64_t> globalShape() const { return shape; }

  /// The runs of dim `dim` held by the device at mesh coordinates `coords`,
  /// in local order (block order), in logical coordinates (through the
  /// dim's storage order); empty runs are left out.
  llvm::SmallVector<DimSegment> segments(unsigned dim,
                                         llvm::ArrayRef<int64_t> coords) const;
  /// The dense local shape of that device's shard.
  llvm::SmallVector<int64_t> localShape(llvm::ArrayRef<int64_t> coords) const;
  /// Number of elements of that device's shard.
  int64_t localNumElements(llvm::ArrayRef<int64_t> coords) const;
  /// Every non-empty global box the device holds: the product of its runs
  /// per dim. A 0-D tensor yields one box of rank 0; a tensor with no
  /// elements on that device yields none.
  std::vector<HeldBox> heldBoxes(llvm::ArrayRef<int64_t> coords) const;
  /// Whether the device at `coords` holds the global box [offset, offset +
  /// sizes) within one run per dim, starting at local offset `local`.
  bool holdsBox(llvm::ArrayRef<int64_t> coords, llvm::ArrayRef<int64_t> offset,
                llvm::ArrayRef<int64_t> sizes,
                llvm::ArrayRef<int64_t> local) const;

private:
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<int64_t> meshShape;
  Sharding sharding;
};

} // namespace reshard

#endif // RESHARD_LAYOUT_GEOMETRY_H
