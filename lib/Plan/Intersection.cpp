//===- Intersection.cpp - Class patterns from per-dim overlaps ------------===//
//
// Per dim, the source segments of all source combos partition [0, n);
// sorted once, each destination segment finds its overlapping source
// segments by binary search. A destination combo's pieces are the product
// of its per-dim overlaps, so only the per-dim tables are computed; the
// product is the pattern's rows.
//
//===----------------------------------------------------------------------===//
#include "reshard/Plan/Intersection.h"

#include <algorithm>

using namespace reshard;

namespace {

/// A run of the source partition along one dim, and which coordinates of
/// the dim's source axes own it (linearised over those axes).
struct SrcRun {
  int64_t globalBegin, size, localBegin, owner;
};

/// One overlap of a destination run with a source run along one dim.
struct Overlap {
  int64_t globalBegin, size, dstLocal, srcLocal, owner;
};

/// Coordinates of a subset of mesh axes, linearised row-major.
struct AxisSubset {
  llvm::SmallVector<unsigned> axes;
  llvm::ArrayRef<int64_t> meshShape;

  int64_t count() const {
    int64_t n = 1;
    for (unsigned a : axes)
      n *= meshShape[a];
    return n;
  }
  void decode(int64_t index, llvm::MutableArrayRef<int64_t> coords) const {
    for (int i = static_cast<int>(axes.size()) - 1; i >= 0; --i) {
      coords[axes[i]] = index % meshShape[axes[i]];
      index /= meshShape[axes[i]];
    }
  }
};

class Intersector {
public:
  explicit Intersector(const TensorLayout &layout)
      : layout(layout), src(layout.srcGeometry()), dst(layout.dstGeometry()),
        srcSplit(layout.src.mesh.shape, layout.src.sharding),
        dstSplit(layout.dst.mesh.shape, layout.dst.sharding),
        pattern(layout.shape.size()) {}

  ClassPattern run();

private:
  unsigned rank() const { return layout.shape.size(); }
  void buildSourcePartition();
  void emitCombo(int64_t dstCombo);

  const TensorLayout &layout;
  ShardGeometry src, dst;
  MeshAxisSplit srcSplit, dstSplit;
  ClassPattern pattern;
  // Per dim: the sorted source partition and the source axes of the dim.
  std::vector<std::vector<SrcRun>> partition;
  std::vector<AxisSubset> srcDimAxes;
};

} // namespace

void Intersector::buildSourcePartition() {
  llvm::ArrayRef<int64_t> meshShape = layout.src.mesh.shape;
  llvm::SmallVector<int64_t> coords(meshShape.size(), 0);
  for (unsigned d = 0; d < rank(); ++d) {
    AxisSubset axes{layout.src.sharding.dims[d].axes, meshShape};
    std::vector<SrcRun> runs;
    for (int64_t c = 0, e = axes.count(); c < e; ++c) {
      axes.decode(c, coords);
      for (const DimSegment &s : src.segments(d, coords))
        runs.push_back({s.globalBegin, s.size, s.localBegin, c});
    }
    std::sort(runs.begin(), runs.end(), [](const SrcRun &a, const SrcRun &b) {
      return a.globalBegin < b.globalBegin;
    });
    partition.push_back(std::move(runs));
    srcDimAxes.push_back(axes);
  }
}

void Intersector::emitCombo(int64_t dstCombo) {
  llvm::SmallVector<int64_t> dstCoords = dstSplit.coordsOf(dstCombo);
  // Per dim, the overlaps of this combo's runs with the source partition.
  std::vector<std::vector<Overlap>> perDim(rank());
  for (unsigned d = 0; d < rank(); ++d) {
    const std::vector<SrcRun> &runs = partition[d];
    for (const DimSegment &seg : dst.segments(d, dstCoords)) {
      int64_t segEnd = seg.globalBegin + seg.size;
      auto it = std::upper_bound(
          runs.begin(), runs.end(), seg.globalBegin,
          [](int64_t v, const SrcRun &r) { return v < r.globalBegin; });
      if (it != runs.begin())
        --it;
      for (; it != runs.end() && it->globalBegin < segEnd; ++it) {
        int64_t begin = std::max(seg.globalBegin, it->globalBegin);
        int64_t end = std::min(segEnd, it->globalBegin + it->size);
        if (begin >= end)
          continue;
        perDim[d].push_back(
            {begin, end - begin, seg.localBegin + (begin - seg.globalBegin),
             it->localBegin + (begin - it->globalBegin), it->owner});
      }
    }
    if (perDim[d].empty())
      return; // this combo holds nothing
  }

  llvm::SmallVector<int64_t> srcCoords(layout.src.mesh.shape.size(), 0);
  llvm::SmallVector<int64_t> gOff(rank()), sizes(rank()), dOff(rank()),
      sOff(rank());
  llvm::SmallVector<size_t> idx(rank(), 0);
  while (true) {
    for (unsigned d = 0; d < rank(); ++d) {
      const Overlap &o = perDim[d][idx[d]];
      gOff[d] = o.globalBegin;
      sizes[d] = o.size;
      dOff[d] = o.dstLocal;
      sOff[d] = o.srcLocal;
      srcDimAxes[d].decode(o.owner, srcCoords);
    }
    pattern.addPiece(dstCombo, srcSplit.comboOfCoords(srcCoords), gOff, sizes,
                     dOff, sOff);
    if (!nextIndex(idx, [&](unsigned d) { return perDim[d].size(); }))
      break;
  }
}

ClassPattern Intersector::run() {
  for (int64_t d : layout.shape)
    if (d == 0)
      return std::move(pattern);
  buildSourcePartition();
  for (int64_t c = 0, e = dstSplit.numCombos(); c < e; ++c)
    emitCombo(c);
  return std::move(pattern);
}

ClassPattern reshard::computeClassPattern(const TensorLayout &layout) {
  return Intersector(layout).run();
}
