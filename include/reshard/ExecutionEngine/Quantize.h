/*===- Quantize.h - FP8 E4M3 quantization of shards ------------*- C++ -*-===*
 *
 * The arithmetic of quantized destinations (docs/Layout.md "Quantized
 * destinations"): OCP e4m3fn rounding, block scales (fp32, amax / 448) and
 * MX scales (E8M0), and a host loop that quantizes one local shard whose
 * blocks along each dim are given as cut points. Header-only, C++11; the
 * scalar functions are also device functions when compiled by nvcc, so the
 * NCCL backend's kernels and the MPI backend's host loops round alike.
 * Everything is done on the bits, so no floating-point environment (flush
 * to zero, rounding mode) changes a result; the one division, x / scale,
 * is an IEEE fp32 division on both. lib/Reference/QuantReference.cpp is
 * an independent reference the tests compare this with.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_QUANTIZE_H
#define RESHARD_EXECUTIONENGINE_QUANTIZE_H

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define RESHARD_QD __host__ __device__
#else
#define RESHARD_QD
#endif

namespace reshard {
namespace engine {

/* What a quantized destination asks for. */
enum QuantKind { kQuantNone = 0, kQuantBlock = 1, kQuantMx = 2 };

/* The element types a quantized tensor's source may have. */
enum QuantInput { kQuantF32 = 0, kQuantBF16 = 1, kQuantF16 = 2 };

/* Where a tensor is quantized: on the ranks that send it, or on the ranks
 * that receive it (after a full-precision transfer). */
enum QuantSide { kQuantOnSender = 0, kQuantOnReceiver = 1 };

/* The largest finite e4m3fn magnitude. */
const float kE4M3Max = 448.0f;

RESHARD_QD inline uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

RESHARD_QD inline float bits_float(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* Exact conversions of the 16-bit inputs to fp32. */
RESHARD_QD inline float bf16_to_float(uint16_t h) {
  return bits_float(uint32_t(h) << 16);
}

RESHARD_QD inline float f16_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  if (exp == 0x1f) /* Inf or NaN */
    return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp != 0)
    return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0)
    return bits_float(sign);
  /* A subnormal half is mant * 2^-24: normalize it. */
  int e = -1;
  do {
    mant <<= 1;
    ++e;
  } while (!(mant & 0x400));
  return bits_float(sign | (uint32_t(112 - e) << 23) | ((mant & 0x3ff) << 13));
}

RESHARD_QD inline float load_input(const void *p, int64_t i, int type) {
  if (type == kQuantF32) {
    float f;
    memcpy(&f, static_cast<const uint8_t *>(p) + 4 * i, 4);
    return f;
  }
  uint16_t h;
  memcpy(&h, static_cast<const uint8_t *>(p) + 2 * i, 2);
  return type == kQuantBF16 ? bf16_to_float(h) : f16_to_float(h);
}

/* m / 2^s rounded to nearest, ties to even (0 < s < 32). */
RESHARD_QD inline uint32_t shift_rne(uint32_t m, int s) {
  uint32_t q = m >> s, rem = m & ((1u << s) - 1), half = 1u << (s - 1);
  return q + (rem > half || (rem == half && (q & 1u)));
}

/* fp32 to e4m3fn, nearest even; magnitudes from 448 up (and infinities)
 * saturate to 448, NaN stays NaN, zero keeps its sign. */
RESHARD_QD inline uint8_t e4m3_from_float(float v) {
  uint32_t u = float_bits(v);
  uint8_t sign = static_cast<uint8_t>((u >> 24) & 0x80);
  uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u)
    return sign | 0x7f;
  if (a >= 0x43e00000u) /* 448 */
    return sign | 0x7e;
  uint32_t exp = a >> 23, mant = (a & 0x7fffffu) | 0x800000u;
  if (exp >= 121) /* |v| >= 2^-6: normal, 3 mantissa bits */
    return sign |
           static_cast<uint8_t>(((exp - 120) << 3) + shift_rne(mant, 20) - 8);
  /* Subnormal e4m3: multiples of 2^-9; |v| = mant * 2^(exp - 150). fp32
   * subnormals (exp 0) are below 2^-126 and round to zero. A result of 8
   * is the smallest normal, whose code is 8 too. */
  int s = 141 - static_cast<int>(exp);
  if (exp == 0 || s > 24)
    return sign;
  return sign | static_cast<uint8_t>(shift_rne(mant, s));
}

/* e4m3fn to fp32 (exact). */
RESHARD_QD inline float e4m3_to_float(uint8_t q) {
  uint32_t sign = uint32_t(q & 0x80) << 24;
  uint32_t exp = (q >> 3) & 0xf, mant = q & 7;
  if (exp == 0xf && mant == 7)
    return bits_float(sign | 0x7fc00000u);
  if (exp != 0)
    return bits_float(sign | ((exp + 120) << 23) | (mant << 20));
  float v = float(mant) * bits_float(0x3b000000u); /* mant * 2^-9 */
  return sign ? -v : v;
}

/* |v| when finite, else 0: what enters a block's amax. */
RESHARD_QD inline float finite_abs(float v) {
  uint32_t a = float_bits(v) & 0x7fffffffu;
  return a >= 0x7f800000u ? 0.0f : bits_float(a);
}

/* The fp32 scale of a block whose amax is `amax`: amax / 448, or 1 when
 * that is zero. */
RESHARD_QD inline float block_scale(float amax) {
  float s = amax / kE4M3Max;
  return s == 0.0f ? 1.0f : s;
}

RESHARD_QD inline uint8_t quantize_scaled(float x, float scale) {
  return e4m3_from_float(x / scale);
}

/* The MX shared exponent e of a block: amax's binary exponent minus 8,
 * clamped to [-127, 127]; -127 for a zero block. */
RESHARD_QD inline int mx_exponent(float amax) {
  uint32_t a = float_bits(amax) & 0x7fffffffu;
  if (a == 0)
    return -127;
  int exp = static_cast<int>(a >> 23), e;
  if (exp != 0) {
    e = exp - 127;
  } else { /* subnormal: mant * 2^-149 */
    e = -150;
    for (uint32_t m = a; m; m >>= 1)
      ++e;
  }
  e -= 8;
  return e < -127 ? -127 : e > 127 ? 127 : e;
}

/* x * 2^-e (exact: e <= 119 for any finite amax, and any product below the
 * fp32 normal range rounds to a zero e4m3 either way), to e4m3. */
RESHARD_QD inline uint8_t quantize_mx(float x, int e) {
  return e4m3_from_float(x * bits_float(uint32_t(127 - e) << 23));
}

/*===-- Shards ------------------------------------------------------------===*/

/* How one local shard is cut into blocks: `ndim` dims of `shape`, and per
 * dim d the block boundaries cuts[d][0] = 0 < ... < cuts[d][nblocks[d]] =
 * shape[d] in local indices. The scale shard is row-major of extents
 * nblocks, one scale per block. */
struct ShardBlocks {
  int64_t ndim;
  const int64_t *shape;
  const int64_t *nblocks;
  const int64_t *const *cuts;
};

/* Calls f(linear index) for every element of the box [lo, hi) of a
 * row-major shard of `shape`, in row-major order. */
template <class F>
inline void for_each_in_box(int64_t nd, const int64_t *shape, const int64_t *lo,
                            const int64_t *hi, F &f) {
  for (int64_t d = 0; d < nd; ++d)
    if (hi[d] <= lo[d])
      return;
  int64_t at[64];
  for (int64_t d = 0; d < nd; ++d)
    at[d] = lo[d];
  for (;;) {
    int64_t lin = 0;
    for (int64_t d = 0; d < nd; ++d)
      lin = lin * shape[d] + at[d];
    f(lin);
    int64_t d = nd - 1;
    for (; d >= 0 && ++at[d] == hi[d]; --d)
      at[d] = lo[d];
    if (d < 0)
      return;
  }
}

/* The callbacks of quantize_shard_host (C++11 has no generic lambdas). */
struct AmaxOf {
  const void *in;
  int input;
  float amax;
  void operator()(int64_t i) {
    float f = finite_abs(load_input(in, i, input));
    amax = f > amax ? f : amax;
  }
};

struct QuantizeInto {
  const void *in;
  int input, kind, e;
  float scale;
  uint8_t *out;
  void operator()(int64_t i) {
    float x = load_input(in, i, input);
    out[i] = kind == kQuantMx ? quantize_mx(x, e) : quantize_scaled(x, scale);
  }
};

/* Quantizes a whole local shard on the host: `in` holds shape's elements
 * (row-major, `input` type), `out` receives one e4m3 byte per element and
 * `scales` one fp32 (kQuantBlock) or one E8M0 byte (kQuantMx) per block,
 * row-major over the blocks. */
inline void quantize_shard_host(int kind, int input, const ShardBlocks &sb,
                                const void *in, uint8_t *out, void *scales) {
  const int64_t nd = sb.ndim;
  int64_t blocks = 1;
  for (int64_t d = 0; d < nd; ++d)
    blocks *= sb.nblocks[d];
  int64_t bi[64], lo[64], hi[64];
  for (int64_t d = 0; d < nd; ++d)
    bi[d] = 0;
  for (int64_t b = 0; b < blocks; ++b) {
    for (int64_t d = 0; d < nd; ++d) {
      lo[d] = sb.cuts[d][bi[d]];
      hi[d] = sb.cuts[d][bi[d] + 1];
    }
    AmaxOf amax = {in, input, 0.0f};
    for_each_in_box(nd, sb.shape, lo, hi, amax);
    QuantizeInto q = {in, input, kind, 0, 1.0f, out};
    if (kind == kQuantMx) {
      q.e = mx_exponent(amax.amax);
      static_cast<uint8_t *>(scales)[b] = static_cast<uint8_t>(q.e + 127);
    } else {
      q.scale = block_scale(amax.amax);
      memcpy(static_cast<uint8_t *>(scales) + 4 * b, &q.scale, 4);
    }
    for_each_in_box(nd, sb.shape, lo, hi, q);
    for (int64_t d = nd - 1; d >= 0 && ++bi[d] == sb.nblocks[d]; --d)
      bi[d] = 0;
  }
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_QUANTIZE_H */
