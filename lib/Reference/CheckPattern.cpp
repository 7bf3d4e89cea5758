//===- CheckPattern.cpp - Pattern-filled shards and element checks --------===//
#include "reshard/Reference/CheckPattern.h"

#include "reshard/Reference/LayoutOracle.h"

using namespace reshard;

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
