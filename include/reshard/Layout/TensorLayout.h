//===- TensorLayout.h - Both sides of a redistribution ----------*- C++ -*-===//
//
// Plain data shared by the dialect (which builds it from its ops), the
// planner and the reference executors.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_TENSORLAYOUT_H
#define RESHARD_LAYOUT_TENSORLAYOUT_H

#include "reshard/Layout/Geometry.h"

#include <map>
#include <string>

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
  /// The local shape of every rank of the source (or destination) side.
  std::map<int64_t, llvm::SmallVector<int64_t>> localShapes(bool source) const;
  /// Bytes of a dense shard of `localShape`.
  int64_t shardBytes(llvm::ArrayRef<int64_t> localShape) const;
};

} // namespace reshard

#endif // RESHARD_LAYOUT_TENSORLAYOUT_H
