//===- QuantCheck.cpp - Element checks of quantized destinations ---------===//
#include "reshard/Reference/QuantCheck.h"

#include "reshard/Reference/LayoutOracle.h"

#include <cstring>

using namespace reshard;

QuantCheckTensor reshard::makeQuantCheck(llvm::ArrayRef<int64_t> shape,
                                         llvm::StringRef dtype,
                                         const QuantSpec &quant,
                                         CheckPattern pattern) {
  QuantCheckTensor q;
  q.inputBytes = dtype == "fp32" ? 4 : 2;
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<float> values(n);
  q.sourceBytes.resize(n * q.inputBytes);
  for (int64_t g = 0; g < n; ++g) {
    uint64_t bits = checkPattern(g, q.inputBytes, pattern);
    for (int64_t b = 0; b < q.inputBytes; ++b)
      q.sourceBytes[g * q.inputBytes + b] =
          static_cast<uint8_t>(bits >> (8 * b));
    if (dtype == "fp32") {
      uint32_t u = static_cast<uint32_t>(bits);
      std::memcpy(&values[g], &u, 4);
    } else if (dtype == "bf16") {
      uint32_t u = static_cast<uint32_t>(bits) << 16;
      std::memcpy(&values[g], &u, 4);
    } else {
      values[g] = static_cast<float>(referenceHalfValue(bits));
    }
  }
  ReferenceQuantized ref = referenceQuantize(shape, values, quant);
  q.payloadBytes = std::move(ref.payload);
  if (quant.kind == QuantSpec::Mx) {
    q.scaleBytes = std::move(ref.e8m0);
  } else {
    q.scaleBytes.resize(ref.scales.size() * 4);
    if (!ref.scales.empty()) // no element: both may be null
      std::memcpy(q.scaleBytes.data(), ref.scales.data(), q.scaleBytes.size());
  }
  return q;
}

ShardBuffers reshard::shardsOfGlobal(llvm::ArrayRef<int64_t> shape,
                                     const SideLayout &side,
                                     int64_t elementBytes,
                                     llvm::ArrayRef<uint8_t> global) {
  ShardBuffers buffers;
  for (size_t i = 0; i < side.mesh.ranks.size(); ++i) {
    std::vector<int64_t> index = referenceGlobalLinearIndices(
        shape, side.mesh.shape, side.sharding, side.mesh.coords(i));
    std::vector<uint8_t> &buf = buffers[side.mesh.ranks[i]];
    buf.resize(index.size() * elementBytes);
    for (size_t e = 0; e < index.size(); ++e)
      std::memcpy(buf.data() + e * elementBytes,
                  global.data() + index[e] * elementBytes, elementBytes);
  }
  return buffers;
}

int64_t reshard::compareShards(const TensorLayout &layout,
                               const ShardBuffers &expected,
                               const ShardBuffers &got,
                               std::vector<Mismatch> &reported,
                               size_t maxReported) {
  int64_t eb = layout.elementBytes, mismatches = 0;
  const SideLayout &side = layout.dst;
  for (const auto &[rank, want] : expected) {
    auto it = got.find(rank);
    size_t elements = want.size() / eb;
    for (size_t e = 0; e < elements; ++e) {
      uint64_t w = 0, g = ~uint64_t(0);
      std::memcpy(&w, want.data() + e * eb, eb);
      if (it != got.end() && it->second.size() == want.size()) {
        g = 0;
        std::memcpy(&g, it->second.data() + e * eb, eb);
      }
      if (w == g)
        continue;
      ++mismatches;
      if (reported.size() < maxReported) {
        std::optional<llvm::SmallVector<int64_t>> coords = side.coordsOf(rank);
        std::vector<int64_t> index =
            coords ? referenceGlobalLinearIndices(layout.shape, side.mesh.shape,
                                                  side.sharding, *coords)
                   : std::vector<int64_t>();
        llvm::SmallVector<int64_t> global;
        int64_t linear = e < index.size() ? index[e] : -1;
        for (size_t d = layout.shape.size(); linear >= 0 && d-- > 0;) {
          global.insert(global.begin(), linear % layout.shape[d]);
          linear /= layout.shape[d];
        }
        reported.push_back({rank, static_cast<int64_t>(e), global, w, g});
      }
    }
  }
  return mismatches;
}
