//===- ClassPattern.cpp - Mesh axis splits and pattern rows ---------------===//
#include "reshard/Layout/ClassPattern.h"

using namespace reshard;

MeshAxisSplit::MeshAxisSplit(llvm::ArrayRef<int64_t> meshShape,
                             const Sharding &sharding)
    : shape(meshShape) {
  llvm::SmallVector<bool> used(meshShape.size(), false);
  for (const DimSharding &dim : sharding.dims)
    for (unsigned a : dim.axes)
      used[a] = true;
  for (unsigned a = 0; a < meshShape.size(); ++a)
    (used[a] ? sharded : replicated).push_back(a);
}

int64_t MeshAxisSplit::countOf(llvm::ArrayRef<unsigned> axes) const {
  int64_t n = 1;
  for (unsigned a : axes)
    n *= shape[a]; // bounded by the mesh's device count
  return n;
}

int64_t MeshAxisSplit::numDevices() const {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

int64_t MeshAxisSplit::comboOf(int64_t linear) const {
  llvm::SmallVector<int64_t> coords(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    coords[i] = linear % shape[i];
    linear /= shape[i];
  }
  return comboOfCoords(coords);
}

int64_t MeshAxisSplit::comboOfCoords(llvm::ArrayRef<int64_t> coords) const {
  int64_t combo = 0;
  for (unsigned a : sharded)
    combo = combo * shape[a] + coords[a];
  return combo;
}

llvm::SmallVector<int64_t> MeshAxisSplit::coordsOf(int64_t combo) const {
  llvm::SmallVector<int64_t> coords(shape.size(), 0);
  for (int i = static_cast<int>(sharded.size()) - 1; i >= 0; --i) {
    coords[sharded[i]] = combo % shape[sharded[i]];
    combo /= shape[sharded[i]];
  }
  return coords;
}

int64_t MeshAxisSplit::deviceOf(int64_t combo, int64_t replica) const {
  llvm::SmallVector<int64_t> coords = coordsOf(combo);
  for (int i = static_cast<int>(replicated.size()) - 1; i >= 0; --i) {
    coords[replicated[i]] = replica % shape[replicated[i]];
    replica /= shape[replicated[i]];
  }
  int64_t linear = 0;
  for (size_t a = 0; a < shape.size(); ++a)
    linear = linear * shape[a] + coords[a];
  return linear;
}

int64_t MeshAxisSplit::ownerOf(int64_t combo,
                               llvm::ArrayRef<unsigned> dimAxes) const {
  llvm::SmallVector<int64_t> coords = coordsOf(combo);
  int64_t owner = 0;
  for (unsigned a : dimAxes)
    owner = owner * shape[a] + coords[a];
  return owner;
}

void ClassPattern::addPiece(int64_t dstCombo, int64_t srcCombo,
                            llvm::ArrayRef<int64_t> globalOffset,
                            llvm::ArrayRef<int64_t> sizes,
                            llvm::ArrayRef<int64_t> dstOffset,
                            llvm::ArrayRef<int64_t> srcOffset) {
  rows.insert(rows.end(), {dstCombo, srcCombo});
  for (llvm::ArrayRef<int64_t> dims :
       {globalOffset, sizes, dstOffset, srcOffset})
    rows.insert(rows.end(), dims.begin(), dims.end());
}
