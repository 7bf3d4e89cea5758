//===- QuantReference.cpp - FP8 quantization, stated naively -----------===//
//
// Double precision throughout: an fp32 division done in double and rounded
// once to fp32 equals the fp32 division (53 >= 2 * 24 + 2 bits), and x·2^-e
// is exact in double, so each step below rounds exactly once, where
// docs/Layout.md says it does.
//
//===----------------------------------------------------------------------===//
#include "reshard/Reference/QuantReference.h"

#include <cmath>
#include <limits>

using namespace reshard;

double reshard::referenceE4M3Value(uint8_t code) {
  int sign = code >> 7, exponent = (code >> 3) & 15, mantissa = code & 7;
  double magnitude;
  if (exponent == 15 && mantissa == 7)
    return std::numeric_limits<double>::quiet_NaN();
  if (exponent == 0)
    magnitude = std::ldexp(mantissa / 8.0, -6);
  else
    magnitude = std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return sign ? -magnitude : magnitude;
}

uint8_t reshard::referenceE4M3(double v) {
  uint8_t sign = std::signbit(v) ? 0x80 : 0;
  if (std::isnan(v))
    return sign | 0x7f;
  double a = std::fabs(v);
  if (a >= 448.0)
    return sign | 0x7e;
  uint8_t best = 0;
  double bestDistance = a;
  for (int c = 1; c <= 0x7e; ++c) {
    double distance = std::fabs(referenceE4M3Value(c) - a);
    if (distance < bestDistance || (distance == bestDistance && c % 2 == 0)) {
      best = c;
      bestDistance = distance;
    }
  }
  return sign | best;
}

double reshard::referenceHalfValue(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 31, mantissa = bits & 1023;
  double magnitude;
  if (exponent == 31)
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else if (exponent == 0)
    magnitude = std::ldexp(mantissa, -24);
  else
    magnitude = std::ldexp(1024.0 + mantissa, exponent - 25);
  return sign ? -magnitude : magnitude;
}

ReferenceQuantized reshard::referenceQuantize(llvm::ArrayRef<int64_t> shape,
                                              llvm::ArrayRef<float> values,
                                              const QuantSpec &quant) {
  size_t rank = shape.size();
  std::vector<int64_t> block(rank, 1);
  for (size_t d = 0; d < rank; ++d)
    block[d] = quant.kind == QuantSpec::Block ? quant.block[d]
               : d + 1 == rank                ? quant.mx
                                              : 1;
  ReferenceQuantized out;
  int64_t numScales = 1;
  for (size_t d = 0; d < rank; ++d) {
    // Rounded up without overflow (a block may be 2^63 - 1).
    out.scaleShape.push_back(shape[d] / block[d] + (shape[d] % block[d] != 0));
    numScales *= out.scaleShape.back();
  }
  // Which block each element is in, row-major over the scale tensor.
  auto blockOf = [&](int64_t linear) {
    int64_t b = 0, stride = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t index = linear % shape[d];
      linear /= shape[d];
      b += index / block[d] * stride;
      stride *= out.scaleShape[d];
    }
    return b;
  };
  std::vector<double> amax(numScales, 0.0);
  for (size_t i = 0; i < values.size(); ++i)
    if (std::isfinite(values[i]))
      amax[blockOf(i)] =
          std::max(amax[blockOf(i)], std::fabs(double(values[i])));
  std::vector<int> exponents(numScales);
  for (int64_t b = 0; b < numScales; ++b) {
    if (quant.kind == QuantSpec::Block) {
      float s = static_cast<float>(amax[b] / 448.0);
      if (s == 0.0f)
        s = 1.0f;
      if (quant.ue8m0) { // up to a power of two, at least 2^-127
        int k;
        double f = std::frexp(double(s), &k); // s = f * 2^k, 0.5 <= f < 1
        s = static_cast<float>(
            std::ldexp(1.0, std::max(-127, f == 0.5 ? k - 1 : k)));
      }
      out.scales.push_back(s);
    } else {
      int e = -127;
      if (amax[b] != 0.0) {
        int k;
        std::frexp(amax[b], &k); // amax = f * 2^k, 0.5 <= f < 1
        e = std::min(127, std::max(-127, k - 1 - 8));
      }
      exponents[b] = e;
      out.e8m0.push_back(static_cast<uint8_t>(e + 127));
    }
  }
  out.payload.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    double x = values[i];
    int64_t b = blockOf(i);
    double scaled;
    if (quant.kind == QuantSpec::Block)
      scaled = static_cast<float>(x / double(out.scales[b]));
    else
      scaled = std::ldexp(x, -exponents[b]);
    if (!std::isnan(scaled))
      scaled = std::min(448.0, std::max(-448.0, scaled));
    out.payload[i] = referenceE4M3(scaled);
  }
  return out;
}
