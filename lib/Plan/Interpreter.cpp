//===- Interpreter.cpp - Host execution and element checks ----------------===//
#include "reshard/Plan/Interpreter.h"

#include "reshard/Layout/Reference.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace reshard;
using llvm::formatv;

std::map<int64_t, llvm::SmallVector<int64_t>>
reshard::localShapes(const TensorLayout &layout, bool source) {
  const SideLayout &side = source ? layout.src : layout.dst;
  ShardGeometry geom = source ? layout.srcGeometry() : layout.dstGeometry();
  std::map<int64_t, llvm::SmallVector<int64_t>> shapes;
  for (size_t i = 0; i < side.mesh.ranks.size(); ++i)
    shapes[side.mesh.ranks[i]] = geom.localShape(side.mesh.coords(i));
  return shapes;
}

static std::string fmtList(llvm::ArrayRef<int64_t> v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// offset + size <= bound in every dim, without overflow.
static bool boxInside(llvm::ArrayRef<int64_t> offset,
                      llvm::ArrayRef<int64_t> sizes,
                      llvm::ArrayRef<int64_t> bound) {
  for (size_t d = 0; d < bound.size(); ++d) {
    int64_t end;
    if (offset[d] < 0 || sizes[d] < 0 ||
        __builtin_add_overflow(offset[d], sizes[d], &end) || end > bound[d])
      return false;
  }
  return true;
}

std::string reshard::validatePieces(const TensorLayout &layout,
                                    const PieceTable &table) {
  if (table.rank() != layout.shape.size())
    return formatv("pieces have rank {0} but tensor '{1}' has rank {2}",
                   table.rank(), layout.name, layout.shape.size());
  auto srcShapes = localShapes(layout, true);
  auto dstShapes = localShapes(layout, false);
  for (size_t i = 0; i < table.size(); ++i) {
    PieceTable::Piece p = table[i];
    auto where = [&] {
      return formatv("tensor '{0}' piece {1}: ", layout.name, i).str();
    };
    auto dstIt = dstShapes.find(p.dstRank());
    if (dstIt == dstShapes.end())
      return where() + formatv("destination rank {0} is not in the "
                               "destination mesh",
                               p.dstRank())
                           .str();
    auto srcIt = srcShapes.find(p.srcRank());
    if (srcIt == srcShapes.end())
      return where() + formatv("source rank {0} is not in the source mesh",
                               p.srcRank())
                           .str();
    if (p.holderGroup() < 0 ||
        p.holderGroup() >= static_cast<int64_t>(table.numHolderGroups()))
      return where() + formatv("holder group {0} does not exist",
                               p.holderGroup())
                           .str();
    llvm::ArrayRef<int64_t> holders = table.holders(p.holderGroup());
    if (!llvm::is_contained(holders, p.srcRank()))
      return where() + formatv("source rank {0} is not among the holders "
                               "{1}",
                               p.srcRank(), fmtList(holders))
                           .str();
    for (int64_t s : p.sizes())
      if (s <= 0)
        return where() + "empty or negative box " + fmtList(p.sizes());
    if (!boxInside(p.globalOffset(), p.sizes(), layout.shape))
      return where() + "box at " + fmtList(p.globalOffset()) + " of size " +
             fmtList(p.sizes()) + " leaves the global shape " +
             fmtList(layout.shape);
    if (!boxInside(p.dstOffset(), p.sizes(), dstIt->second))
      return where() + "destination box at " + fmtList(p.dstOffset()) +
             " leaves the local shape " + fmtList(dstIt->second) +
             " of rank " + std::to_string(p.dstRank());
    if (!boxInside(p.srcOffset(), p.sizes(), srcIt->second))
      return where() + "source box at " + fmtList(p.srcOffset()) +
             " leaves the local shape " + fmtList(srcIt->second) +
             " of rank " + std::to_string(p.srcRank());
  }
  return "";
}

/// Copies an N-D box between two dense row-major buffers, one contiguous
/// run of the innermost dim at a time.
static void copyBox(const uint8_t *src, llvm::ArrayRef<int64_t> srcShape,
                    llvm::ArrayRef<int64_t> srcOffset, uint8_t *dst,
                    llvm::ArrayRef<int64_t> dstShape,
                    llvm::ArrayRef<int64_t> dstOffset,
                    llvm::ArrayRef<int64_t> sizes, int64_t elementBytes) {
  unsigned rank = sizes.size();
  if (rank == 0) {
    std::memcpy(dst, src, elementBytes);
    return;
  }
  int64_t run = sizes[rank - 1] * elementBytes;
  llvm::SmallVector<int64_t> idx(rank, 0);
  while (true) {
    int64_t s = 0, d = 0;
    for (unsigned k = 0; k < rank; ++k) {
      s = s * srcShape[k] + srcOffset[k] + idx[k];
      d = d * dstShape[k] + dstOffset[k] + idx[k];
    }
    std::memcpy(dst + d * elementBytes, src + s * elementBytes, run);
    int k = static_cast<int>(rank) - 2;
    for (; k >= 0; --k) {
      if (++idx[k] < sizes[k])
        break;
      idx[k] = 0;
    }
    if (k < 0)
      break;
  }
}

std::string reshard::executePieces(const TensorLayout &layout,
                                   const PieceTable &table,
                                   const ShardBuffers &src, ShardBuffers &dst) {
  std::string err = validatePieces(layout, table);
  if (!err.empty())
    return err;
  auto srcShapes = localShapes(layout, true);
  auto dstShapes = localShapes(layout, false);
  auto sizeOk = [&](const ShardBuffers &bufs, int64_t rank,
                    llvm::ArrayRef<int64_t> shape) {
    auto it = bufs.find(rank);
    int64_t n = layout.elementBytes;
    for (int64_t e : shape)
      n *= e;
    return it != bufs.end() && static_cast<int64_t>(it->second.size()) == n;
  };
  for (size_t i = 0; i < table.size(); ++i) {
    PieceTable::Piece p = table[i];
    const auto &srcShape = srcShapes[p.srcRank()];
    const auto &dstShape = dstShapes[p.dstRank()];
    if (!sizeOk(src, p.srcRank(), srcShape) ||
        !sizeOk(dst, p.dstRank(), dstShape))
      return formatv("tensor '{0}': a buffer of rank {1} or {2} is missing or "
                     "has the wrong size",
                     layout.name, p.srcRank(), p.dstRank());
    copyBox(src.at(p.srcRank()).data(), srcShape, p.srcOffset(),
            dst[p.dstRank()].data(), dstShape, p.dstOffset(), p.sizes(),
            layout.elementBytes);
  }
  return "";
}

uint64_t reshard::checkPattern(int64_t index, int64_t elementBytes) {
  uint64_t v = static_cast<uint64_t>(index);
  switch (elementBytes) {
  case 1:
    return v & 0xFF;
  case 2:
    return v & 0xFFFF;
  case 4:
    return v & 0xFFFFFFFF;
  default:
    return v;
  }
}

static void storeElement(uint8_t *p, uint64_t v, int64_t bytes) {
  for (int64_t b = 0; b < bytes; ++b) // little-endian, as the files are
    p[b] = static_cast<uint8_t>(v >> (8 * b));
}

static uint64_t loadElement(const uint8_t *p, int64_t bytes) {
  uint64_t v = 0;
  for (int64_t b = 0; b < bytes; ++b)
    v |= static_cast<uint64_t>(p[b]) << (8 * b);
  return v;
}

ShardBuffers reshard::makeCheckBuffers(const TensorLayout &layout,
                                       bool source) {
  const SideLayout &side = source ? layout.src : layout.dst;
  int64_t eb = layout.elementBytes;
  uint64_t mask = checkPattern(-1, eb);
  ShardBuffers buffers;
  for (size_t i = 0; i < side.mesh.ranks.size(); ++i) {
    std::vector<int64_t> global = referenceGlobalLinearIndices(
        layout.shape, side.mesh.shape, side.sharding, side.mesh.coords(i));
    std::vector<uint8_t> &buf = buffers[side.mesh.ranks[i]];
    buf.resize(global.size() * eb);
    for (size_t e = 0; e < global.size(); ++e) {
      uint64_t v = checkPattern(global[e], eb);
      storeElement(buf.data() + e * eb, source ? v : (~v & mask), eb);
    }
  }
  return buffers;
}

int64_t reshard::checkDestination(const TensorLayout &layout,
                                  const ShardBuffers &dst,
                                  std::vector<Mismatch> &reported,
                                  size_t maxReported) {
  int64_t eb = layout.elementBytes, mismatches = 0;
  const SideLayout &side = layout.dst;
  for (size_t i = 0; i < side.mesh.ranks.size(); ++i) {
    int64_t rank = side.mesh.ranks[i];
    std::vector<int64_t> global = referenceGlobalLinearIndices(
        layout.shape, side.mesh.shape, side.sharding, side.mesh.coords(i));
    auto it = dst.find(rank);
    if (it == dst.end() ||
        it->second.size() != global.size() * static_cast<size_t>(eb)) {
      mismatches += global.size();
      continue;
    }
    for (size_t e = 0; e < global.size(); ++e) {
      uint64_t expected = checkPattern(global[e], eb);
      uint64_t actual = loadElement(it->second.data() + e * eb, eb);
      if (expected == actual)
        continue;
      if (reported.size() < maxReported) {
        Mismatch m{rank, static_cast<int64_t>(e), {}, expected, actual};
        int64_t g = global[e];
        m.globalIndex.resize(layout.shape.size());
        for (int d = static_cast<int>(layout.shape.size()) - 1; d >= 0; --d) {
          m.globalIndex[d] = g % layout.shape[d];
          g /= layout.shape[d];
        }
        reported.push_back(std::move(m));
      }
      ++mismatches;
    }
  }
  return mismatches;
}
