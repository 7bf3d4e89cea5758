//===- Geometry.cpp - Nested torch.chunk on intervals ------------------===//
#include "reshard/Layout/Geometry.h"

#include "llvm/Support/CheckedArithmetic.h"

using namespace reshard;

/// torch.chunk of [0, n) into `parts`: chunk `index` of size ceil(n / parts),
/// clipped to n (so trailing chunks may be short or empty).
static Interval chunkOne(int64_t n, int64_t parts, int64_t index) {
  int64_t chunk = n / parts + (n % parts != 0);
  std::optional<int64_t> begin = llvm::checkedMul(chunk, index);
  if (!begin || *begin >= n)
    return {n, n};
  return {*begin, *begin + std::min(chunk, n - *begin)};
}

Interval reshard::chunkInterval(int64_t n, llvm::ArrayRef<int64_t> sizes,
                                llvm::ArrayRef<int64_t> coords) {
  Interval cur{0, n};
  for (size_t i = 0; i < sizes.size(); ++i) {
    Interval sub = chunkOne(cur.size(), sizes[i], coords[i]);
    cur = {cur.begin + sub.begin, cur.begin + sub.end};
  }
  return cur;
}

ShardGeometry::ShardGeometry(llvm::ArrayRef<int64_t> shape,
                             llvm::ArrayRef<int64_t> meshShape,
                             const Sharding &sharding)
    : shape(shape), meshShape(meshShape), sharding(sharding) {}

llvm::SmallVector<DimSegment>
ShardGeometry::segments(unsigned dim, llvm::ArrayRef<int64_t> coords) const {
  const DimSharding &ds = sharding.dims[dim];
  llvm::SmallVector<int64_t, 4> sizes, axisCoords;
  for (unsigned axis : ds.axes) {
    sizes.push_back(meshShape[axis]);
    axisCoords.push_back(coords[axis]);
  }
  // Runs in stored coordinates first; the order then maps them to logical.
  llvm::SmallVector<DimSegment> stored;
  auto addBlock = [&](int64_t blockBegin, int64_t blockSize, int64_t &local) {
    Interval piece = chunkInterval(blockSize, sizes, axisCoords);
    if (piece.empty())
      return;
    stored.push_back({blockBegin + piece.begin, piece.size(), local});
    local += piece.size();
  };
  int64_t local = 0;
  if (ds.blocks.empty()) {
    addBlock(0, shape[dim], local);
  } else {
    int64_t blockBegin = 0;
    for (int64_t blockSize : ds.blocks) {
      addBlock(blockBegin, blockSize, local);
      blockBegin += blockSize;
    }
  }
  if (ds.order.empty())
    return stored;
  return toLogical(stored, ds.order);
}

llvm::SmallVector<DimSegment>
reshard::toLogical(llvm::ArrayRef<DimSegment> stored,
                   llvm::ArrayRef<OrderRun> order) {
  llvm::SmallVector<DimSegment> out;
  auto append = [&](DimSegment s) {
    // Neighbours contiguous in both coordinates stay one run.
    if (!out.empty() &&
        out.back().globalBegin + out.back().size == s.globalBegin &&
        out.back().localBegin + out.back().size == s.localBegin) {
      out.back().size += s.size;
      return;
    }
    out.push_back(s);
  };
  for (const DimSegment &seg : stored) {
    // Walk the runs that [seg.globalBegin, +size) of the stored dim crosses.
    int64_t runStored = 0; // stored index of the run's first element
    for (const OrderRun &run : order) {
      int64_t runEnd = runStored + run.length;
      int64_t begin = std::max(seg.globalBegin, runStored);
      int64_t end = std::min(seg.globalBegin + seg.size, runEnd);
      if (begin < end)
        append({run.start + (begin - runStored), end - begin,
                seg.localBegin + (begin - seg.globalBegin)});
      runStored = runEnd;
      if (runStored >= seg.globalBegin + seg.size)
        break;
    }
  }
  return out;
}

llvm::SmallVector<int64_t>
ShardGeometry::localShape(llvm::ArrayRef<int64_t> coords) const {
  llvm::SmallVector<int64_t> local;
  for (unsigned d = 0; d < rank(); ++d) {
    int64_t extent = 0;
    for (const DimSegment &s : segments(d, coords))
      extent += s.size;
    local.push_back(extent);
  }
  return local;
}

int64_t ShardGeometry::localNumElements(llvm::ArrayRef<int64_t> coords) const {
  int64_t n = 1;
  for (int64_t e : localShape(coords))
    n *= e; // bounded by the global element count, checked by the verifier
  return n;
}

std::vector<HeldBox>
ShardGeometry::heldBoxes(llvm::ArrayRef<int64_t> coords) const {
  llvm::SmallVector<llvm::SmallVector<DimSegment>> perDim;
  for (unsigned d = 0; d < rank(); ++d) {
    perDim.push_back(segments(d, coords));
    if (perDim.back().empty())
      return {};
  }
  // Odometer over the per-dim runs: the boxes are their cartesian product.
  std::vector<HeldBox> boxes;
  llvm::SmallVector<size_t> idx(rank(), 0);
  while (true) {
    HeldBox box;
    for (unsigned d = 0; d < rank(); ++d) {
      const DimSegment &s = perDim[d][idx[d]];
      box.globalOffset.push_back(s.globalBegin);
      box.sizes.push_back(s.size);
      box.localOffset.push_back(s.localBegin);
    }
    boxes.push_back(std::move(box));
    if (!nextIndex(idx, [&](unsigned d) { return perDim[d].size(); }))
      break;
  }
  return boxes;
}

bool ShardGeometry::holdsBox(llvm::ArrayRef<int64_t> coords,
                             llvm::ArrayRef<int64_t> offset,
                             llvm::ArrayRef<int64_t> sizes,
                             llvm::ArrayRef<int64_t> local) const {
  for (unsigned d = 0; d < rank(); ++d) {
    bool found = false;
    for (const DimSegment &seg : segments(d, coords)) {
      if (offset[d] < seg.globalBegin ||
          offset[d] >= seg.globalBegin + seg.size)
        continue;
      found = offset[d] + sizes[d] <= seg.globalBegin + seg.size &&
              local[d] == seg.localBegin + (offset[d] - seg.globalBegin);
      break;
    }
    if (!found)
      return false;
  }
  return true;
}
