//===- PieceInterpreter.cpp - Host execution of piece tables --------------===//
#include "reshard/Reference/PieceInterpreter.h"

#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cstring>

using namespace reshard;
using llvm::formatv;

static llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(msg);
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
    std::optional<int64_t> end = llvm::checkedAdd(offset[d], sizes[d]);
    if (offset[d] < 0 || sizes[d] < 0 || !end || *end > bound[d])
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

llvm::Error reshard::validatePieces(const TensorLayout &layout,
                                    const PieceTable &table) {
  if (table.rank() != layout.shape.size())
    return fail(formatv("pieces have rank {0} but tensor '{1}' has rank {2}",
                        table.rank(), layout.name, layout.shape.size()));
  auto srcCoords = coordsByRank(layout.src.mesh);
  auto dstCoords = coordsByRank(layout.dst.mesh);
  ShardGeometry srcGeom = layout.srcGeometry(), dstGeom = layout.dstGeometry();

  // A holder group is sound when all its ranks are source ranks holding the
  // same runs (they differ only on replicated axes).
  for (size_t g = 0; g < table.numHolderGroups(); ++g) {
    llvm::ArrayRef<int64_t> holders = table.holders(g);
    for (int64_t h : holders)
      if (!srcCoords.count(h))
        return fail(
            formatv("tensor '{0}': holder group {1} lists rank {2}, which "
                    "is not in the source mesh",
                    layout.name, g, h));
    for (int64_t h : holders.drop_front())
      for (unsigned d = 0; d < srcGeom.rank(); ++d)
        if (srcGeom.segments(d, srcCoords[h]) !=
            srcGeom.segments(d, srcCoords[holders.front()]))
          return fail(
              formatv("tensor '{0}': holder group {1}: ranks {2} and {3} "
                      "hold different data",
                      layout.name, g, holders.front(), h));
  }

  std::map<std::vector<int64_t>, int64_t> deliveredAtStep;
  for (size_t i = 0; i < table.size(); ++i) {
    auto [it, inserted] = deliveredAtStep.try_emplace(
        deliveryKey(table[i].dstRank(), table[i]), table[i].step());
    if (!inserted)
      return fail(
          formatv("tensor '{0}' piece {1}: rank {2} receives the box at "
                  "{3} twice",
                  layout.name, i, table[i].dstRank(),
                  fmtList(table[i].globalOffset())));
  }

  for (size_t i = 0; i < table.size(); ++i) {
    PieceTable::Piece p = table[i];
    auto where = [&] {
      return formatv("tensor '{0}' piece {1}: ", layout.name, i).str();
    };
    auto dstIt = dstCoords.find(p.dstRank());
    if (dstIt == dstCoords.end())
      return fail(where() + formatv("destination rank {0} is not in the "
                                    "destination mesh",
                                    p.dstRank())
                                .str());
    if (!srcCoords.count(p.srcRank()))
      return fail(where() + formatv("source rank {0} is not in the source mesh",
                                    p.srcRank())
                                .str());
    if (p.holderGroup() < 0 ||
        p.holderGroup() >= static_cast<int64_t>(table.numHolderGroups()))
      return fail(
          where() +
          formatv("holder group {0} does not exist", p.holderGroup()).str());
    llvm::ArrayRef<int64_t> holders = table.holders(p.holderGroup());
    if (!llvm::is_contained(holders, p.srcRank()))
      return fail(where() + formatv("source rank {0} is not among the holders "
                                    "{1}",
                                    p.srcRank(), fmtList(holders))
                                .str());
    for (int64_t s : p.sizes())
      if (s <= 0)
        return fail(where() + "empty or negative box " + fmtList(p.sizes()));
    if (!boxInside(p.globalOffset(), p.sizes(), layout.shape))
      return fail(where() + "box at " + fmtList(p.globalOffset()) +
                  " of size " + fmtList(p.sizes()) +
                  " leaves the global shape " + fmtList(layout.shape));
    if (!dstGeom.holdsBox(dstIt->second, p.globalOffset(), p.sizes(),
                          p.dstOffset()))
      return fail(
          where() + "box at " + fmtList(p.globalOffset()) + " of size " +
          fmtList(p.sizes()) + " is not stored at " + fmtList(p.dstOffset()) +
          " in the shard of destination rank " + std::to_string(p.dstRank()));
    if (!srcGeom.holdsBox(srcCoords[p.srcRank()], p.globalOffset(), p.sizes(),
                          p.srcOffset()))
      return fail(where() + "box at " + fmtList(p.globalOffset()) +
                  " of size " + fmtList(p.sizes()) + " is not stored at " +
                  fmtList(p.srcOffset()) + " in the shard of source rank " +
                  std::to_string(p.srcRank()));
    if (p.via() != -1) {
      auto it = deliveredAtStep.find(deliveryKey(p.via(), p));
      if (it == deliveredAtStep.end())
        return fail(
            where() +
            formatv("relay rank {0} does not receive this box", p.via()).str());
      if (it->second >= p.step())
        return fail(where() +
                    formatv("relay rank {0} receives the box in step "
                            "{1}, not before this forward in step {2}",
                            p.via(), it->second, p.step())
                        .str());
    }
  }
  return llvm::Error::success();
}

/// Element strides, by logical dim, of a buffer of `shape` (extents by
/// logical dim) that stores its dims in `dimOrder`, written out here rather
/// than taken from the layout library the plans are built with.
static llvm::SmallVector<int64_t> strides(llvm::ArrayRef<int64_t> shape,
                                          llvm::ArrayRef<int64_t> dimOrder) {
  unsigned rank = shape.size();
  llvm::SmallVector<int64_t> out(rank);
  int64_t s = 1;
  for (int k = static_cast<int>(rank) - 1; k >= 0; --k) {
    unsigned d = dimOrder.empty() ? k : dimOrder[k];
    out[d] = s;
    s *= shape[d];
  }
  return out;
}

/// Copies an N-D box between two dense buffers, a run of the last dim at a
/// time where both store it innermost, else element by element.
static void copyBox(const uint8_t *src, llvm::ArrayRef<int64_t> srcShape,
                    llvm::ArrayRef<int64_t> srcOrder,
                    llvm::ArrayRef<int64_t> srcOffset, uint8_t *dst,
                    llvm::ArrayRef<int64_t> dstShape,
                    llvm::ArrayRef<int64_t> dstOrder,
                    llvm::ArrayRef<int64_t> dstOffset,
                    llvm::ArrayRef<int64_t> sizes, int64_t elementBytes) {
  unsigned rank = sizes.size();
  for (int64_t s : sizes)
    if (s == 0)
      return;
  llvm::SmallVector<int64_t> ss = strides(srcShape, srcOrder),
                             ds = strides(dstShape, dstOrder);
  bool rows = rank > 0 && ss[rank - 1] == 1 && ds[rank - 1] == 1;
  int64_t run = (rows ? sizes[rank - 1] : 1) * elementBytes;
  llvm::SmallVector<int64_t> idx(rank, 0);
  while (true) {
    int64_t s = 0, d = 0;
    for (unsigned k = 0; k < rank; ++k) {
      s += (srcOffset[k] + idx[k]) * ss[k];
      d += (dstOffset[k] + idx[k]) * ds[k];
    }
    std::memcpy(dst + d * elementBytes, src + s * elementBytes, run);
    int k = static_cast<int>(rank) - (rows ? 2 : 1);
    for (; k >= 0; --k) {
      if (++idx[k] < sizes[k])
        break;
      idx[k] = 0;
    }
    if (k < 0)
      break;
  }
}

llvm::Error reshard::executePieces(const TensorLayout &layout,
                                   const PieceTable &table,
                                   const ShardBuffers &src, ShardBuffers &dst) {
  if (llvm::Error err = validatePieces(layout, table))
    return err;
  auto srcShapes = layout.localShapes(true);
  auto dstShapes = layout.localShapes(false);
  llvm::ArrayRef<int64_t> srcOrder = layout.src.sharding.dimOrder,
                          dstOrder = layout.dst.sharding.dimOrder;
  auto sizeOk = [&](const ShardBuffers &bufs, int64_t rank,
                    llvm::ArrayRef<int64_t> shape) {
    auto it = bufs.find(rank);
    return it != bufs.end() &&
           static_cast<int64_t>(it->second.size()) == layout.shardBytes(shape);
  };
  for (auto &[rank, shape] : srcShapes)
    if (!sizeOk(src, rank, shape))
      return fail(
          formatv("tensor '{0}': the buffer of source rank {1} is missing "
                  "or has the wrong size",
                  layout.name, rank));
  for (auto &[rank, shape] : dstShapes)
    if (!sizeOk(dst, rank, shape))
      return fail(formatv("tensor '{0}': the buffer of destination rank {1} is "
                          "missing or has the wrong size",
                          layout.name, rank));
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
      copyBox(src.at(p.srcRank()).data(), srcShapes[p.srcRank()], srcOrder,
              p.srcOffset(), dst[p.dstRank()].data(), dstShape, dstOrder,
              p.dstOffset(), p.sizes(), layout.elementBytes);
      continue;
    }
    PieceTable::Piece relay = table[deliveredBy.at(deliveryKey(p.via(), p))];
    copyBox(dst.at(p.via()).data(), dstShapes[p.via()], dstOrder,
            relay.dstOffset(), dst[p.dstRank()].data(), dstShape, dstOrder,
            p.dstOffset(), p.sizes(), layout.elementBytes);
  }
  return llvm::Error::success();
}
