//===- Interpreter.cpp - Host execution and element checks ----------------===//
#include "reshard/Plan/Interpreter.h"

#include "reshard/Layout/Reference.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
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

namespace {
/// Rank -> mesh coordinates of one side.
std::map<int64_t, llvm::SmallVector<int64_t>> coordsByRank(const MeshSpec &m) {
  std::map<int64_t, llvm::SmallVector<int64_t>> out;
  for (size_t i = 0; i < m.ranks.size(); ++i)
    out[m.ranks[i]] = m.coords(i);
  return out;
}

/// Identifies a box delivered to a rank: [rank, globalOffset..., sizes...].
std::vector<int64_t> deliveryKey(int64_t rank, const PieceTable::Piece &p) {
  std::vector<int64_t> key = {rank};
  key.insert(key.end(), p.globalOffset().begin(), p.globalOffset().end());
  key.insert(key.end(), p.sizes().begin(), p.sizes().end());
  return key;
}
} // namespace

/// Whether the global box [offset, offset + sizes) lies within one run of
/// the device at `coords` per dim, at local offset `local`.
static bool boxMapsTo(const ShardGeometry &geom, llvm::ArrayRef<int64_t> coords,
                      llvm::ArrayRef<int64_t> offset,
                      llvm::ArrayRef<int64_t> sizes,
                      llvm::ArrayRef<int64_t> local) {
  for (unsigned d = 0; d < geom.rank(); ++d) {
    bool found = false;
    for (const DimSegment &seg : geom.segments(d, coords)) {
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

std::string reshard::validatePieces(const TensorLayout &layout,
                                    const PieceTable &table) {
  if (table.rank() != layout.shape.size())
    return formatv("pieces have rank {0} but tensor '{1}' has rank {2}",
                   table.rank(), layout.name, layout.shape.size());
  auto srcCoords = coordsByRank(layout.src.mesh);
  auto dstCoords = coordsByRank(layout.dst.mesh);
  ShardGeometry srcGeom = layout.srcGeometry(), dstGeom = layout.dstGeometry();

  // A holder group is sound when all its ranks are source ranks holding the
  // same runs (they differ only on replicated axes).
  for (size_t g = 0; g < table.numHolderGroups(); ++g) {
    llvm::ArrayRef<int64_t> holders = table.holders(g);
    for (int64_t h : holders)
      if (!srcCoords.count(h))
        return formatv("tensor '{0}': holder group {1} lists rank {2}, which "
                       "is not in the source mesh",
                       layout.name, g, h);
    for (int64_t h : holders.drop_front())
      for (unsigned d = 0; d < srcGeom.rank(); ++d)
        if (srcGeom.segments(d, srcCoords[h]) !=
            srcGeom.segments(d, srcCoords[holders.front()]))
          return formatv("tensor '{0}': holder group {1}: ranks {2} and {3} "
                         "hold different data",
                         layout.name, g, holders.front(), h);
  }

  std::map<std::vector<int64_t>, int64_t> deliveredAtStep;
  for (size_t i = 0; i < table.size(); ++i) {
    auto [it, inserted] = deliveredAtStep.try_emplace(
        deliveryKey(table[i].dstRank(), table[i]), table[i].step());
    if (!inserted)
      return formatv("tensor '{0}' piece {1}: rank {2} receives the box at "
                     "{3} twice",
                     layout.name, i, table[i].dstRank(),
                     fmtList(table[i].globalOffset()));
  }

  for (size_t i = 0; i < table.size(); ++i) {
    PieceTable::Piece p = table[i];
    auto where = [&] {
      return formatv("tensor '{0}' piece {1}: ", layout.name, i).str();
    };
    auto dstIt = dstCoords.find(p.dstRank());
    if (dstIt == dstCoords.end())
      return where() + formatv("destination rank {0} is not in the "
                               "destination mesh",
                               p.dstRank())
                           .str();
    if (!srcCoords.count(p.srcRank()))
      return where() +
             formatv("source rank {0} is not in the source mesh", p.srcRank())
                 .str();
    if (p.holderGroup() < 0 ||
        p.holderGroup() >= static_cast<int64_t>(table.numHolderGroups()))
      return where() +
             formatv("holder group {0} does not exist", p.holderGroup()).str();
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
    if (!boxMapsTo(dstGeom, dstIt->second, p.globalOffset(), p.sizes(),
                   p.dstOffset()))
      return where() + "box at " + fmtList(p.globalOffset()) + " of size " +
             fmtList(p.sizes()) + " is not stored at " +
             fmtList(p.dstOffset()) + " in the shard of destination rank " +
             std::to_string(p.dstRank());
    if (!boxMapsTo(srcGeom, srcCoords[p.srcRank()], p.globalOffset(), p.sizes(),
                   p.srcOffset()))
      return where() + "box at " + fmtList(p.globalOffset()) + " of size " +
             fmtList(p.sizes()) + " is not stored at " +
             fmtList(p.srcOffset()) + " in the shard of source rank " +
             std::to_string(p.srcRank());
    if (p.via() != -1) {
      auto it = deliveredAtStep.find(deliveryKey(p.via(), p));
      if (it == deliveredAtStep.end())
        return where() +
               formatv("relay rank {0} does not receive this box", p.via())
                   .str();
      if (it->second >= p.step())
        return where() + formatv("relay rank {0} receives the box in step "
                                 "{1}, not before this forward in step {2}",
                                 p.via(), it->second, p.step())
                             .str();
    }
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
  for (auto &[rank, shape] : srcShapes)
    if (!sizeOk(src, rank, shape))
      return formatv("tensor '{0}': the buffer of source rank {1} is missing "
                     "or has the wrong size",
                     layout.name, rank);
  for (auto &[rank, shape] : dstShapes)
    if (!sizeOk(dst, rank, shape))
      return formatv("tensor '{0}': the buffer of destination rank {1} is "
                     "missing or has the wrong size",
                     layout.name, rank);
  // Steps in order; a relayed piece reads the relay's destination buffer,
  // which an earlier step filled.
  std::vector<size_t> order(table.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return table[a].step() < table[b].step();
  });
  std::map<std::vector<int64_t>, size_t> deliveredBy;
  for (size_t i = 0; i < table.size(); ++i)
    deliveredBy[deliveryKey(table[i].dstRank(), table[i])] = i;
  for (size_t i : order) {
    PieceTable::Piece p = table[i];
    const auto &dstShape = dstShapes[p.dstRank()];
    if (p.via() == -1) {
      copyBox(src.at(p.srcRank()).data(), srcShapes[p.srcRank()], p.srcOffset(),
              dst[p.dstRank()].data(), dstShape, p.dstOffset(), p.sizes(),
              layout.elementBytes);
      continue;
    }
    PieceTable::Piece relay = table[deliveredBy.at(deliveryKey(p.via(), p))];
    copyBox(dst.at(p.via()).data(), dstShapes[p.via()], relay.dstOffset(),
            dst[p.dstRank()].data(), dstShape, p.dstOffset(), p.sizes(),
            layout.elementBytes);
  }
  return "";
}

uint64_t reshard::checkPattern(int64_t index, int64_t elementBytes,
                               CheckPattern pattern) {
  uint64_t z = static_cast<uint64_t>(index);
  if (pattern == CheckPattern::Hash) {
    // splitmix64's finalizer: every bit of the index reaches the low bits.
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
  }
  return elementBytes >= 8 ? z : z & ((uint64_t(1) << (8 * elementBytes)) - 1);
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

ShardBuffers reshard::makeCheckBuffers(const TensorLayout &layout, bool source,
                                       CheckPattern pattern) {
  const SideLayout &side = source ? layout.src : layout.dst;
  int64_t eb = layout.elementBytes;
  uint64_t mask = eb >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * eb)) - 1;
  ShardBuffers buffers;
  for (size_t i = 0; i < side.mesh.ranks.size(); ++i) {
    std::vector<int64_t> global = referenceGlobalLinearIndices(
        layout.shape, side.mesh.shape, side.sharding, side.mesh.coords(i));
    std::vector<uint8_t> &buf = buffers[side.mesh.ranks[i]];
    buf.resize(global.size() * eb);
    for (size_t e = 0; e < global.size(); ++e) {
      uint64_t v = checkPattern(global[e], eb, pattern);
      storeElement(buf.data() + e * eb, source ? v : (~v & mask), eb);
    }
  }
  return buffers;
}

int64_t reshard::checkDestination(const TensorLayout &layout,
                                  const ShardBuffers &dst,
                                  std::vector<Mismatch> &reported,
                                  size_t maxReported, CheckPattern pattern) {
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
      uint64_t expected = checkPattern(global[e], eb, pattern);
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
