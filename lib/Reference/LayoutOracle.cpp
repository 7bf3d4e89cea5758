//===- LayoutOracle.cpp - torch.chunk on explicit index lists ------------===//
#include "reshard/Reference/LayoutOracle.h"

using namespace reshard;

/// torch.chunk(list, parts)[index]: chunks of ceil(len / parts); trailing
/// chunks may be short, and indices past the last chunk get nothing.
static std::vector<int64_t> torchChunk(const std::vector<int64_t> &list,
                                       int64_t parts, int64_t index) {
  int64_t len = list.size();
  int64_t chunk = (len + parts - 1) / parts;
  std::vector<int64_t> out;
  for (int64_t i = index * chunk; i < std::min(len, (index + 1) * chunk); ++i)
    out.push_back(list[i]);
  return out;
}

std::vector<int64_t> reshard::referenceDimIndices(
    llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> meshShape,
    const Sharding &sharding, unsigned dim, llvm::ArrayRef<int64_t> coords) {
  const DimSharding &ds = sharding.dims[dim];
  // The logical index of each stored index: the order's runs concatenated.
  std::vector<int64_t> stored;
  for (const OrderRun &run : ds.order)
    for (int64_t i = 0; i < run.length; ++i)
      stored.push_back(run.start + i);
  if (ds.order.empty())
    for (int64_t i = 0; i < shape[dim]; ++i)
      stored.push_back(i);
  std::vector<int64_t> blocks(ds.blocks.begin(), ds.blocks.end());
  if (blocks.empty())
    blocks.push_back(shape[dim]);
  std::vector<int64_t> local;
  int64_t start = 0;
  for (int64_t size : blocks) {
    std::vector<int64_t> piece;
    for (int64_t i = 0; i < size; ++i)
      piece.push_back(stored[start + i]);
    for (unsigned axis : ds.axes)
      piece = torchChunk(piece, meshShape[axis], coords[axis]);
    local.insert(local.end(), piece.begin(), piece.end());
    start += size;
  }
  return local;
}

std::vector<int64_t> reshard::referenceGlobalLinearIndices(
    llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> meshShape,
    const Sharding &sharding, llvm::ArrayRef<int64_t> coords) {
  unsigned rank = shape.size();
  // No element anywhere: a dim of 2^40 beside a dim of 0 lists nothing.
  if (llvm::is_contained(shape, 0))
    return {};
  std::vector<std::vector<int64_t>> perDim;
  int64_t count = 1;
  for (unsigned d = 0; d < rank; ++d) {
    perDim.push_back(
        referenceDimIndices(shape, meshShape, sharding, d, coords));
    count *= perDim.back().size();
  }
  // The buffer's dims, outermost first: the sharding's dim order spelt out
  // here by hand, not through the geometry's helpers.
  std::vector<unsigned> stored(rank);
  for (unsigned k = 0; k < rank; ++k)
    stored[k] = sharding.dimOrder.empty() ? k : sharding.dimOrder[k];
  std::vector<int64_t> out;
  out.reserve(count);
  std::vector<size_t> idx(rank, 0); // by logical dim
  for (int64_t e = 0; e < count; ++e) {
    int64_t linear = 0;
    for (unsigned d = 0; d < rank; ++d)
      linear = linear * shape[d] + perDim[d][idx[d]];
    out.push_back(linear);
    for (int k = static_cast<int>(rank) - 1; k >= 0; --k) {
      unsigned d = stored[k];
      if (++idx[d] < perDim[d].size())
        break;
      idx[d] = 0;
    }
  }
  return out;
}
