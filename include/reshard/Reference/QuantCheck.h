//===- QuantCheck.h - Element checks of quantized destinations --*- C++ -*-===//
//
// What reshard-run's checks put in a quantized tensor's source (each
// element's check pattern, of the source's own size, read as a bf16, fp16
// or fp32 value) and expect in its destinations: the reference quantization
// (QuantReference.h) of that whole tensor, the FP8 payload and the scale
// tensor laid out by the layout oracle. Shares no code with the engine.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_REFERENCE_QUANTCHECK_H
#define RESHARD_REFERENCE_QUANTCHECK_H

#include "reshard/Reference/CheckPattern.h"
#include "reshard/Reference/QuantReference.h"

namespace reshard {

/// One quantized tensor under the check: the global source bytes (the
/// pattern, `inputBytes` per element) and the global payload and scale
/// bytes they quantize to.
struct QuantCheckTensor {
  int64_t inputBytes = 0;
  std::vector<uint8_t> sourceBytes, payloadBytes, scaleBytes;
};

/// The check's quantized tensor of `shape` whose source dtype is `dtype`
/// (bf16, fp16 or fp32), quantized as `quant` says.
QuantCheckTensor makeQuantCheck(llvm::ArrayRef<int64_t> shape,
                                llvm::StringRef dtype, const QuantSpec &quant,
                                CheckPattern pattern);

/// Every device's shard of one side, cut by the layout oracle from the
/// global row-major bytes `global` (`elementBytes` per element).
ShardBuffers shardsOfGlobal(llvm::ArrayRef<int64_t> shape,
                            const SideLayout &side, int64_t elementBytes,
                            llvm::ArrayRef<uint8_t> global);

/// Compares every element of `got` with `expected` (both one side's
/// buffers of `layout`'s destination). Returns the number of mismatches and
/// records the first `maxReported`.
int64_t compareShards(const TensorLayout &layout, const ShardBuffers &expected,
                      const ShardBuffers &got, std::vector<Mismatch> &reported,
                      size_t maxReported);

} // namespace reshard

#endif // RESHARD_REFERENCE_QUANTCHECK_H
