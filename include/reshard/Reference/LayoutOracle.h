//===- LayoutOracle.h - Element-by-element layout oracle --------*- C++ -*-===//
//
// A deliberately naive statement of the layout semantics (docs/Layout.md): it
// splits explicit index lists the way torch.chunk splits tensors. It shares no
// code with Geometry.h, so tests that check plans against it check the geometry
// too. Cost grows with elements: use it for checking, never for planning.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_REFERENCE_LAYOUTORACLE_H
#define RESHARD_REFERENCE_LAYOUTORACLE_H

#include "reshard/Layout/Layout.h"

#include <vector>

namespace reshard {

/// The global indices, in local order, that the device at mesh `coords`
/// holds along dim `dim` of a tensor of `shape` sharded by `sharding` on a
/// mesh of `meshShape`.
std::vector<int64_t> referenceDimIndices(llvm::ArrayRef<int64_t> shape,
                                         llvm::ArrayRef<int64_t> meshShape,
                                         const Sharding &sharding, unsigned dim,
                                         llvm::ArrayRef<int64_t> coords);

/// For every element of that device's dense shard, in buffer order (its
/// dims in the sharding's dim order, row-major), the row-major linear index
/// of the same element in the global tensor.
std::vector<int64_t> referenceGlobalLinearIndices(
    llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> meshShape,
    const Sharding &sharding, llvm::ArrayRef<int64_t> coords);

} // namespace reshard

#endif // RESHARD_REFERENCE_LAYOUTORACLE_H
