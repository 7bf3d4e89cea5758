//===- Intersection.cpp - Pieces from per-dim interval intersections ------===//
//
// Per dim, the source segments of all source coordinates partition [0, n);
// sorted once, each destination segment finds its overlapping source
// segments by binary search. A destination shard's pieces are the product
// of its per-dim overlaps. Destination devices that differ only on
// replicated axes share the computation; source devices that differ only on
// replicated axes form one holder group.
//
//===----------------------------------------------------------------------===//
#include "reshard/Plan/Intersection.h"

#include "llvm/ADT/DenseMap.h"

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

/// Mixed-radix enumeration of the coordinates of a subset of mesh axes.
struct AxisOdometer {
  llvm::SmallVector<unsigned> axes;
  llvm::ArrayRef<int64_t> meshShape;

  int64_t count() const {
    int64_t n = 1;
    for (unsigned a : axes)
      n *= meshShape[a];
    return n;
  }
  /// Writes the coordinates of combination `index` into `coords`.
  void decode(int64_t index, llvm::MutableArrayRef<int64_t> coords) const {
    for (int i = static_cast<int>(axes.size()) - 1; i >= 0; --i) {
      coords[axes[i]] = index % meshShape[axes[i]];
      index /= meshShape[axes[i]];
    }
  }
  int64_t encode(llvm::ArrayRef<int64_t> coords) const {
    int64_t index = 0;
    for (unsigned a : axes)
      index = index * meshShape[a] + coords[a];
    return index;
  }
};

class Intersector {
public:
  explicit Intersector(const TensorLayout &layout)
      : layout(layout), src(layout.srcGeometry()), dst(layout.dstGeometry()),
        table(layout.shape.size()) {}

  PieceTable run();

private:
  void buildSourcePartition();
  int64_t holderGroupFor(llvm::ArrayRef<int64_t> srcCoords);
  void emitDstGroup(llvm::ArrayRef<int64_t> dstCoords,
                    llvm::ArrayRef<int64_t> dstRanks);

  const TensorLayout &layout;
  ShardGeometry src, dst;
  PieceTable table;
  unsigned rank() const { return layout.shape.size(); }

  // Per dim: the sorted source partition and its axes.
  std::vector<std::vector<SrcRun>> partition;
  std::vector<AxisOdometer> srcDimAxes;
  AxisOdometer srcSharded, srcReplicated;
  llvm::DenseMap<int64_t, int64_t> groupOf; // src sharded combo -> group
};

} // namespace

void Intersector::buildSourcePartition() {
  llvm::ArrayRef<int64_t> meshShape = layout.src.mesh.shape;
  llvm::SmallVector<int64_t> coords(meshShape.size(), 0);
  for (unsigned d = 0; d < rank(); ++d) {
    AxisOdometer od{layout.src.sharding.dims[d].axes, meshShape};
    std::vector<SrcRun> runs;
    for (int64_t c = 0, e = od.count(); c < e; ++c) {
      od.decode(c, coords);
      for (const DimSegment &s : src.segments(d, coords))
        runs.push_back({s.globalBegin, s.size, s.localBegin, c});
    }
    std::sort(runs.begin(), runs.end(), [](const SrcRun &a, const SrcRun &b) {
      return a.globalBegin < b.globalBegin;
    });
    partition.push_back(std::move(runs));
    srcDimAxes.push_back(od);
  }
}

int64_t Intersector::holderGroupFor(llvm::ArrayRef<int64_t> srcCoords) {
  int64_t key = srcSharded.encode(srcCoords);
  auto [it, inserted] = groupOf.try_emplace(key, 0);
  if (!inserted)
    return it->second;
  // Every device that agrees on the sharded axes holds the same data.
  llvm::SmallVector<int64_t> coords(srcCoords.begin(), srcCoords.end());
  llvm::SmallVector<int64_t> ranks;
  for (int64_t r = 0, e = srcReplicated.count(); r < e; ++r) {
    srcReplicated.decode(r, coords);
    ranks.push_back(layout.src.mesh.ranks[layout.src.mesh.linear(coords)]);
  }
  llvm::sort(ranks);
  it->second = table.addHolderGroup(ranks);
  return it->second;
}

void Intersector::emitDstGroup(llvm::ArrayRef<int64_t> dstCoords,
                               llvm::ArrayRef<int64_t> dstRanks) {
  // Per dim, the overlaps of this shard's runs with the source partition.
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
      return; // this shard holds nothing
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
    int64_t group = holderGroupFor(srcCoords);
    llvm::ArrayRef<int64_t> holders = table.holders(group);
    for (int64_t dstRank : dstRanks) {
      bool local = std::binary_search(holders.begin(), holders.end(), dstRank);
      table.addPiece(dstRank, local ? dstRank : holders.front(), group, gOff,
                     sizes, dOff, sOff);
    }
    if (!nextIndex(idx, [&](unsigned d) { return perDim[d].size(); }))
      break;
  }
}

PieceTable Intersector::run() {
  for (int64_t d : layout.shape)
    if (d == 0)
      return std::move(table);
  buildSourcePartition();

  // Source axes that shard some dim vs those that replicate.
  const MeshSpec &srcMesh = layout.src.mesh;
  llvm::SmallVector<bool> srcUsed(srcMesh.shape.size(), false);
  for (const DimSharding &ds : layout.src.sharding.dims)
    for (unsigned a : ds.axes)
      srcUsed[a] = true;
  srcSharded.meshShape = srcReplicated.meshShape = srcMesh.shape;
  for (unsigned a = 0; a < srcMesh.shape.size(); ++a)
    (srcUsed[a] ? srcSharded : srcReplicated).axes.push_back(a);

  // Destination devices that differ only on replicated axes need the same
  // boxes: compute once per combination of the sharded axes.
  const MeshSpec &dstMesh = layout.dst.mesh;
  llvm::SmallVector<bool> dstUsed(dstMesh.shape.size(), false);
  for (const DimSharding &ds : layout.dst.sharding.dims)
    for (unsigned a : ds.axes)
      dstUsed[a] = true;
  AxisOdometer dstSharded{{}, dstMesh.shape}, dstReplicated{{}, dstMesh.shape};
  for (unsigned a = 0; a < dstMesh.shape.size(); ++a)
    (dstUsed[a] ? dstSharded : dstReplicated).axes.push_back(a);

  llvm::SmallVector<int64_t> coords(dstMesh.shape.size(), 0);
  llvm::SmallVector<int64_t> ranks;
  for (int64_t s = 0, se = dstSharded.count(); s < se; ++s) {
    dstSharded.decode(s, coords);
    ranks.clear();
    for (int64_t r = 0, re = dstReplicated.count(); r < re; ++r) {
      dstReplicated.decode(r, coords);
      ranks.push_back(dstMesh.ranks[dstMesh.linear(coords)]);
    }
    emitDstGroup(coords, ranks);
  }
  table.sortByDestination();
  return std::move(table);
}

PieceTable reshard::computePieces(const TensorLayout &layout) {
  return Intersector(layout).run();
}
