//===- TensorLayout.cpp - Ranks and local shapes of a redistribution ------===//
#include "reshard/Layout/TensorLayout.h"

using namespace reshard;

std::optional<llvm::SmallVector<int64_t>>
SideLayout::coordsOf(int64_t rank) const {
  for (size_t i = 0; i < mesh.ranks.size(); ++i)
    if (mesh.ranks[i] == rank)
      return mesh.coords(i);
  return std::nullopt;
}

std::map<int64_t, llvm::SmallVector<int64_t>>
TensorLayout::localShapes(bool source) const {
  const SideLayout &side = source ? src : dst;
  ShardGeometry geom = source ? srcGeometry() : dstGeometry();
  std::map<int64_t, llvm::SmallVector<int64_t>> shapes;
  for (size_t i = 0; i < side.mesh.ranks.size(); ++i)
    shapes[side.mesh.ranks[i]] = geom.localShape(side.mesh.coords(i));
  return shapes;
}

int64_t TensorLayout::shardBytes(llvm::ArrayRef<int64_t> localShape) const {
  int64_t n = elementBytes;
  for (int64_t e : localShape)
    n *= e; // bounded by the tensor's byte size, which the verifier checks
  return n;
}
