//===- QuantReference.h - FP8 quantization, stated naively ------*- C++ -*-===//
//
// An independent statement of docs/Layout.md "Quantized destinations" for
// tests: it works on the whole logical tensor in double precision, finds the
// nearest e4m3fn value by scanning every code, and shares no code with the
// engine's bit-level kernels (ExecutionEngine/Quantize.h), so the tests that
// compare the two check both. Slow: for checking only.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_REFERENCE_QUANTREFERENCE_H
#define RESHARD_REFERENCE_QUANTREFERENCE_H

#include "reshard/Layout/Layout.h"

#include <cstdint>
#include <vector>

namespace reshard {

/// The value of an e4m3fn code (NaN for S.1111.111).
double referenceE4M3Value(uint8_t code);

/// The e4m3fn code nearest to `v` (ties to the even code), ±448 for
/// magnitudes of 448 and more, a NaN code for NaN, signed zero kept.
uint8_t referenceE4M3(double v);

/// The exact value of an IEEE half given by its bits.
double referenceHalfValue(uint16_t bits);

/// A whole logical tensor quantized: one payload byte per element
/// (row-major), and the scale tensor (row-major of `scaleShape`): fp32 for
/// block scaling, E8M0 bytes for MX.
struct ReferenceQuantized {
  std::vector<uint8_t> payload;
  std::vector<int64_t> scaleShape;
  std::vector<float> scales; // block scaling
  std::vector<uint8_t> e8m0; // MX
};

/// Quantizes a logical tensor of `shape` whose elements are `values` (the
/// source's elements converted exactly to fp32), as `quant` says.
ReferenceQuantized referenceQuantize(llvm::ArrayRef<int64_t> shape,
                                     llvm::ArrayRef<float> values,
                                     const QuantSpec &quant);

} // namespace reshard

#endif // RESHARD_REFERENCE_QUANTREFERENCE_H
