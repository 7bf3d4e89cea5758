//===- Quant.cpp - Quantized destinations: blocks and alignment ---------===//
//
// The layout side of docs/Layout.md "Quantized destinations": block sizes
// per dim, and the rule that every shard boundary along a blocked dim is a
// multiple of the dim's block size, so that each device holds whole blocks.
//
//===----------------------------------------------------------------------===//
#include "reshard/Layout/Quant.h"
#include "reshard/Layout/Geometry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace reshard;
using llvm::formatv;

llvm::SmallVector<int64_t> QuantSpec::blockSizes(size_t rank) const {
  llvm::SmallVector<int64_t> sizes(rank, 1);
  if (kind == Block)
    for (size_t d = 0; d < rank && d < block.size(); ++d)
      sizes[d] = block[d];
  else if (kind == Mx && rank > 0)
    sizes[rank - 1] = mx;
  return sizes;
}

std::string QuantSpec::str() const {
  if (kind == Block)
    return "block [" +
           llvm::join(llvm::map_range(
                          block, [](int64_t b) { return std::to_string(b); }),
                      ", ") +
           "]" + (ue8m0 ? " ue8m0" : "");
  if (kind == Mx)
    return "mx " + std::to_string(mx);
  return "";
}

std::optional<MisalignedBoundary> reshard::findMisalignedBoundary(
    const Sharding &sharding, llvm::ArrayRef<int64_t> meshShape,
    llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> blockSizes) {
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = shape[d], b = blockSizes[d];
    if (b <= 1)
      continue;
    auto aligned = [&](int64_t at) { return at % b == 0 || at == n; };
    const DimSharding &ds = sharding.dims[d];
    llvm::SmallVector<int64_t> blocks(ds.blocks.begin(), ds.blocks.end());
    if (blocks.empty())
      blocks.push_back(n);
    llvm::SmallVector<int64_t, 4> sizes;
    for (unsigned axis : ds.axes)
      sizes.push_back(meshShape[axis]);
    int64_t begin = 0;
    for (size_t k = 0; k < blocks.size(); begin += blocks[k++])
      if (!aligned(begin))
        return MisalignedBoundary{d, k, begin, {}, {}};
    begin = 0;
    for (size_t k = 0; k < blocks.size(); begin += blocks[k++]) {
      // Every chunk of this block, over every coordinate of the dim's axes.
      llvm::SmallVector<int64_t, 4> coords(sizes.size(), 0);
      for (bool more = true; more;) {
        Interval c = chunkInterval(blocks[k], sizes, coords);
        for (int64_t at : {begin + c.begin, begin + c.end})
          if (!aligned(at))
            return MisalignedBoundary{
                d, k, at, coords, {begin + c.begin, begin + c.end}};
        more = false;
        for (size_t i = coords.size(); i-- > 0 && !more;)
          if (++coords[i] < sizes[i])
            more = true;
          else
            coords[i] = 0;
      }
    }
  }
  return std::nullopt;
}

std::string reshard::describeMisalignment(const MisalignedBoundary &m,
                                          const Sharding &sharding,
                                          llvm::ArrayRef<std::string> axes,
                                          llvm::ArrayRef<int64_t> shape,
                                          int64_t blockSize) {
  if (m.isBlockStart())
    return formatv("block {0} of dim {1} starts at {2}, which is not a "
                   "multiple of the quantization block size {3}",
                   m.block, m.dim, m.boundary, blockSize);
  std::string where;
  const DimSharding &ds = sharding.dims[m.dim];
  for (size_t i = 0; i < ds.axes.size(); ++i)
    where +=
        formatv("{0}{1}={2}", i ? ", " : "", axes[ds.axes[i]], m.coords[i]);
  return formatv("shard boundary {0} of dim {1} (the chunk [{2}, {3}) at "
                 "{4}{5}) is not a multiple of the quantization block size "
                 "{6}; every chunk and block boundary along a quantized dim "
                 "must be one, except at the dim's end ({7})",
                 m.boundary, m.dim, m.chunk[0], m.chunk[1], where,
                 ds.blocks.empty() ? std::string()
                                   : formatv(" of block {0}", m.block).str(),
                 blockSize, shape[m.dim]);
}

llvm::Error reshard::verifyQuantizedSide(const Sharding &sharding,
                                         llvm::ArrayRef<int64_t> meshShape,
                                         llvm::ArrayRef<std::string> axes,
                                         llvm::ArrayRef<int64_t> shape,
                                         llvm::StringRef dtype,
                                         const std::string &path) {
  if (sharding.quant.empty())
    return llvm::Error::success();
  std::string quantPath = path.empty() ? "quant" : path + ".quant";
  if (!quantInputType(dtype))
    return llvm::make_error<LayoutError>(
        quantPath,
        formatv("a quantized destination needs a bf16, fp16 or fp32 tensor, "
                "not {0}",
                dtype)
            .str());
  llvm::SmallVector<int64_t> sizes = sharding.quant.blockSizes(shape.size());
  std::optional<MisalignedBoundary> m =
      findMisalignedBoundary(sharding, meshShape, shape, sizes);
  if (!m)
    return llvm::Error::success();
  // A fused block's start is written in `blocks`; a chunk's comes from the
  // dim's axes.
  const char *dot = path.empty() ? "" : ".";
  std::string dimPath =
      m->isBlockStart()
          ? formatv("{0}{1}blocks.{2}[{3}]", path, dot, m->dim, m->block).str()
          : formatv("{0}{1}dims[{2}]", path, dot, m->dim).str();
  return llvm::make_error<LayoutError>(
      dimPath, describeMisalignment(*m, sharding, axes, shape, sizes[m->dim]));
}

std::optional<int> reshard::quantInputType(llvm::StringRef dtype) {
  if (dtype == "fp32")
    return 0;
  if (dtype == "bf16")
    return 1;
  if (dtype == "fp16")
    return 2;
  return std::nullopt;
}

std::optional<Sharding> reshard::scaleSharding(const Sharding &sharding,
                                               llvm::ArrayRef<int64_t> shape,
                                               llvm::ArrayRef<int64_t> blocks) {
  Sharding out;
  for (size_t d = 0; d < shape.size(); ++d) {
    const DimSharding &ds = sharding.dims[d];
    int64_t n = shape[d], b = blocks[d];
    auto whole = [&](int64_t begin, int64_t size) {
      return size == 0 ||
             (begin % b == 0 && (size % b == 0 || begin + size == n));
    };
    DimSharding scaled;
    scaled.axes = ds.axes;
    int64_t begin = 0;
    for (int64_t size : ds.blocks) {
      // Fused blocks count stored indices; with an order they must still
      // start on a quantization block.
      if (!whole(begin, size))
        return std::nullopt;
      scaled.blocks.push_back(llvm::divideCeilSigned(size, b));
      begin += size;
    }
    for (const OrderRun &r : ds.order) {
      if (!whole(r.start, r.length))
        return std::nullopt;
      scaled.order.push_back(
          {r.start / b, llvm::divideCeilSigned(r.length, b)});
    }
    out.dims.push_back(std::move(scaled));
  }
  return out;
}

namespace {
/// Indices in order as runs [begin, end), a run that continues the last
/// one merged into it.
struct IndexRuns {
  llvm::SmallVector<std::pair<int64_t, int64_t>> runs;
  void add(int64_t begin, int64_t end) {
    if (begin == end)
      return;
    if (!runs.empty() && runs.back().second == begin)
      runs.back().second = end;
    else
      runs.push_back({begin, end});
  }
};
} // namespace

std::optional<std::string> reshard::checkWholeBlocks(
    const Sharding &sharding, llvm::ArrayRef<int64_t> meshShape,
    llvm::ArrayRef<std::string> axes, llvm::ArrayRef<int64_t> shape,
    llvm::ArrayRef<int64_t> blocks) {
  // The quantizer walks blocks of a row-major shard.
  if (!sharding.dimOrder.empty())
    return std::string("the shard stores its dims in another order");
  std::optional<Sharding> scaled = scaleSharding(sharding, shape, blocks);
  if (!scaled)
    return std::string("a storage order run or fused block does not start "
                       "on a quantization block");
  llvm::SmallVector<int64_t> scaleShape;
  for (size_t d = 0; d < shape.size(); ++d)
    scaleShape.push_back(llvm::divideCeilSigned(shape[d], blocks[d]));
  ShardGeometry payload(shape, meshShape, sharding);
  ShardGeometry scales(scaleShape, meshShape, *scaled);
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = shape[d], b = blocks[d];
    const llvm::SmallVector<unsigned> &dimAxes = sharding.dims[d].axes;
    // The dim's runs depend only on the coordinates of its own axes.
    llvm::SmallVector<int64_t> coords(meshShape.size(), 0);
    for (bool more = true; more;) {
      // The blocks this device holds along d, in local order, against the
      // scale indices the scale sharding gives it: as runs of consecutive
      // indices (a dim may hold billions of blocks).
      IndexRuns want, got;
      for (const DimSegment &s : payload.segments(d, coords)) {
        int64_t end = s.globalBegin + s.size;
        if (s.globalBegin % b != 0 || (end % b != 0 && end != n)) {
          std::string where;
          for (size_t i = 0; i < dimAxes.size(); ++i)
            where += llvm::formatv("{0}{1}={2}", i ? ", " : "",
                                   axes[dimAxes[i]], coords[dimAxes[i]]);
          return llvm::formatv("the device at {0} holds indices [{1}, {2}) "
                               "of dim {3}, not whole blocks of {4}",
                               where.empty() ? "every coordinate" : where,
                               s.globalBegin, end, d, b)
              .str();
        }
        want.add(s.globalBegin / b, llvm::divideCeilSigned(end, b));
      }
      for (const DimSegment &s : scales.segments(d, coords))
        got.add(s.globalBegin, s.globalBegin + s.size);
      if (want.runs != got.runs)
        return llvm::formatv("the scale sharding of dim {0} does not follow "
                             "the payload's blocks",
                             d)
            .str();
      more = false;
      for (size_t i = dimAxes.size(); i-- > 0 && !more;) {
        unsigned a = dimAxes[i];
        if (++coords[a] < meshShape[a])
          more = true;
        else
          coords[a] = 0;
      }
    }
  }
  return std::nullopt;
}
