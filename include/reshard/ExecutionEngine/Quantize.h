/*===- Quantize.h - FP8 E4M3 quantization of shards ------------*- C++ -*-===*
 *
 * The arithmetic of quantized destinations (docs/Layout.md "Quantized
 * destinations"): OCP e4m3fn rounding, block scales (fp32, amax / 448) and
 * MX scales (E8M0), and a host loop that quantizes one local shard whose
 * blocks along each dim are given as cut points. Header-only, C++11; the
 * scalar functions are also device functions when compiled by nvcc, so the
 * NCCL backend's kernels and the MPI backend's host loops round alike.
 * Conversions, comparisons and rounding to e4m3 work on the bits. The two
 * floating-point operations, the divisions by 448 and by the scale and
 * the MX product by 2^-e, are IEEE fp32 with subnormals, rounded to
 * nearest even, whatever the floating-point environment: on a GPU they
 * are PTX instructions without .ftz (so nvcc's -ftz, -prec-div and
 * -use_fast_math change nothing), and the host loop runs under
 * HostFloatDefaults, because it runs in the caller's process, which may
 * flush subnormals (torch.set_flush_denormal, -ffast-math libraries) or
 * round otherwise. lib/Reference/QuantReference.cpp is an independent
 * reference the tests compare this with.
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

#if defined(__SSE2__) || defined(_M_X64)
#include <xmmintrin.h>
#elif !defined(__aarch64__)
#include <cfenv>
#endif

namespace reshard {
namespace engine {

/* What a quantized destination asks for: block scaling (fp32 scales, with
 * kQuantBlockUe8m0 each rounded up to a power of two) or MXFP8. Both block
 * kinds quantize an element alike, by its block's fp32 scale. */
enum QuantKind {
  kQuantNone = 0,
  kQuantBlock = 1,
  kQuantMx = 2,
  kQuantBlockUe8m0 = 3
};

/* The element types a quantized tensor's source may have. */
enum QuantInput { kQuantF32 = 0, kQuantBF16 = 1, kQuantF16 = 2 };

/* The bytes of one element of a quantized tensor's source. */
RESHARD_QD inline int64_t quant_input_bytes(int input) {
  return input == kQuantF32 ? 4 : 2;
}

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

/* Element i of a source shard (on a GPU a word load: the plan's entry
 * points check that such shards are aligned to their elements). */
RESHARD_QD inline float load_input(const void *p, int64_t i, int type) {
#if defined(__CUDA_ARCH__)
  if (type == kQuantF32)
    return static_cast<const float *>(p)[i];
  uint16_t w = static_cast<const uint16_t *>(p)[i];
  return type == kQuantBF16 ? bf16_to_float(w) : f16_to_float(w);
#endif
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
 * saturate to 448, NaN stays NaN, zero keeps its sign. On the bits: what
 * the host runs, and what the GPU's conversion is checked against. */
RESHARD_QD inline uint8_t e4m3_from_float_bits(float v) {
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

/* A NaN input's e4m3 NaN, with its sign: a GPU's division, product and
 * conversion give the canonical (positive) NaN whatever the operand's
 * sign, the host's keep it; so NaN never enters them. */
RESHARD_QD inline bool nan_e4m3(float x, uint8_t *q) {
  uint32_t u = float_bits(x);
  if ((u & 0x7fffffffu) <= 0x7f800000u)
    return false;
  *q = static_cast<uint8_t>(((u >> 24) & 0x80) | 0x7f);
  return true;
}

/* e4m3_from_float_bits of two values that are not NaN, `lo` in the low
 * byte; from sm_89 on, the GPU's own conversion (one instruction for the
 * pair), which rounds alike (saturating, subnormals kept:
 * scripts/gpu-check.sh compares the two on all 2^32 inputs, in both
 * bytes). RESHARD_SOFT_E4M3 keeps the bits version there too. */
RESHARD_QD inline uint32_t e4m3x2_from_numbers(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890 &&                          \
    !defined(RESHARD_SOFT_E4M3)
  unsigned short pair;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;"
      : "=h"(pair)
      : "f"(hi), "f"(lo));
  return pair;
#else
  /* A NaN (callers test for it first) comes out positive, as a GPU's
   * division leaves it: a host test then sees a path that lets one in. */
  uint32_t l = e4m3_from_float_bits(lo), h = e4m3_from_float_bits(hi);
  return (l == 0xffu ? 0x7fu : l) | (h == 0xffu ? 0x7fu : h) << 8;
#endif
}

RESHARD_QD inline uint8_t e4m3_from_number(float v) {
  return static_cast<uint8_t>(e4m3x2_from_numbers(v, 0.0f) & 0xffu);
}

RESHARD_QD inline uint8_t e4m3_from_float(float v) {
  uint8_t q;
  return nan_e4m3(v, &q) ? q : e4m3_from_number(v);
}

/* e4m3fn to fp32 (exact). */
RESHARD_QD inline float e4m3_to_float(uint8_t q) {
  uint32_t sign = uint32_t(q & 0x80) << 24;
  uint32_t exp = (q >> 3) & 0xf, mant = q & 7;
  if (exp == 0xf && mant == 7)
    return bits_float(sign | 0x7fc00000u);
  if (exp != 0)
    return bits_float(sign | ((exp + 120) << 23) | (mant << 20));
  if (mant == 0)
    return bits_float(sign);
  /* mant * 2^-9: normalize the subnormal. */
  exp = 121; /* 2^-6 once mant is 8..15 */
  for (; !(mant & 8); mant <<= 1)
    --exp;
  return bits_float(sign | (exp << 23) | ((mant & 7) << 20));
}

/* The bits of |v| when finite, else 0: what enters a block's amax. As
 * integers they order like the magnitudes, subnormals included. */
RESHARD_QD inline uint32_t finite_abs_bits(float v) {
  uint32_t a = float_bits(v) & 0x7fffffffu;
  return a >= 0x7f800000u ? 0u : a;
}

RESHARD_QD inline float finite_abs(float v) {
  return bits_float(finite_abs_bits(v));
}

/* x / y and x * y in IEEE fp32, subnormals kept, rounded to nearest even
 * (see the top of this file for the host). */
RESHARD_QD inline float div_rn(float x, float y) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("div.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  return r;
#else
  return x / y;
#endif
}

RESHARD_QD inline float mul_rn(float x, float y) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("mul.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(x), "f"(y));
  return r;
#else
  return x * y;
#endif
}

/* The fp32 scale of a block whose amax is `amax`: amax / 448, or 1 when
 * that is zero. */
RESHARD_QD inline float block_scale(float amax) {
  float s = div_rn(amax, kE4M3Max);
  return (float_bits(s) & 0x7fffffffu) == 0 ? 1.0f : s;
}

/* The smallest power of two >= s (s > 0, finite), and at least 2^-127,
 * E8M0's least: a ue8m0 block scale, exact on the bits. */
RESHARD_QD inline float ue8m0_scale(float s) {
  const uint32_t kLeast = 0x00400000u; /* 2^-127, an fp32 subnormal */
  uint32_t a = float_bits(s) & 0x7fffffffu;
  if (a <= kLeast)
    return bits_float(kLeast);
  if ((a & 0x007fffffu) == 0)
    return bits_float(a);
  /* The next exponent up (a subnormal's is 0: 2^-126). */
  return bits_float((a & 0x7f800000u) + 0x00800000u);
}

/* The fp32 scale of a block of kind kQuantBlock or kQuantBlockUe8m0. */
RESHARD_QD inline float quant_block_scale(int kind, float amax) {
  float s = block_scale(amax);
  return kind == kQuantBlockUe8m0 ? ue8m0_scale(s) : s;
}

RESHARD_QD inline uint8_t quantize_scaled(float x, float scale) {
  uint8_t q;
  return nan_e4m3(x, &q) ? q : e4m3_from_number(div_rn(x, scale));
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
 * fp32 normal range rounds to a zero e4m3 either way). */
RESHARD_QD inline float mx_quotient(float x, int e) {
  return mul_rn(x, bits_float(uint32_t(127 - e) << 23));
}

RESHARD_QD inline uint8_t quantize_mx(float x, int e) {
  uint8_t q;
  return nan_e4m3(x, &q) ? q : e4m3_from_number(mx_quotient(x, e));
}

/* The host loops' floating-point environment, from construction to
 * destruction: subnormals kept (no flush to zero, no denormals-are-zero),
 * rounding to nearest even, and no exception traps (x / scale may be
 * subnormal or inexact, a signalling NaN input raises invalid); the
 * caller's is restored after, its status flags included. */
class HostFloatDefaults {
public:
#if defined(__SSE2__) || defined(_M_X64)
  /* MXCSR: FTZ is bit 15, DAZ bit 6, the rounding control bits 13-14,
   * the exception masks bits 7-12. */
  HostFloatDefaults() : saved(_mm_getcsr()) {
    _mm_setcsr((saved | 0x1f80u) & ~(0x8000u | 0x0040u | 0x6000u));
  }
  ~HostFloatDefaults() { _mm_setcsr(saved); }

private:
  unsigned saved;
#elif defined(__aarch64__)
  /* FPCR: FZ is bit 24, FZ16 bit 19, the rounding mode bits 22-23, the
   * trap enables bits 8-12 and 15, FIZ and AH bits 0-1. */
  HostFloatDefaults() {
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(saved));
    uint64_t want = saved & ~((1ull << 24) | (1ull << 19) | (3ull << 22) |
                              (0x1full << 8) | (1ull << 15) | 3ull);
    __asm__ __volatile__("msr fpcr, %0" : : "r"(want) : "memory");
  }
  ~HostFloatDefaults() {
    __asm__ __volatile__("msr fpcr, %0" : : "r"(saved) : "memory");
  }

private:
  uint64_t saved;
#else
  HostFloatDefaults() : saved(std::fegetround()) {
    std::fesetround(FE_TONEAREST);
  }
  ~HostFloatDefaults() { std::fesetround(saved); }

private:
  int saved;
#endif
  HostFloatDefaults(const HostFloatDefaults &);
  HostFloatDefaults &operator=(const HostFloatDefaults &);
};

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
  uint32_t amax; /* bits */
  void operator()(int64_t i) {
    uint32_t a = finite_abs_bits(load_input(in, i, input));
    amax = a > amax ? a : amax;
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
 * `scales` one fp32 (block kinds) or one E8M0 byte (kQuantMx) per block,
 * row-major over the blocks. With `out` null only the scales are written
 * (the fused pack quantizes the elements as it packs them). */
inline void quantize_shard_host(int kind, int input, const ShardBlocks &sb,
                                const void *in, uint8_t *out, void *scales) {
  HostFloatDefaults defaults;
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
    AmaxOf amax = {in, input, 0u};
    for_each_in_box(nd, sb.shape, lo, hi, amax);
    QuantizeInto q = {in, input, kind, 0, 1.0f, out};
    if (kind == kQuantMx) {
      q.e = mx_exponent(bits_float(amax.amax));
      static_cast<uint8_t *>(scales)[b] = static_cast<uint8_t>(q.e + 127);
    } else {
      q.scale = quant_block_scale(kind, bits_float(amax.amax));
      memcpy(static_cast<uint8_t *>(scales) + 4 * b, &q.scale, 4);
    }
    if (out)
      for_each_in_box(nd, sb.shape, lo, hi, q);
    for (int64_t d = nd - 1; d >= 0 && ++bi[d] == sb.nblocks[d]; --d)
      bi[d] = 0;
  }
}

/* Block `block`'s scale as a word: its fp32 scale's bits, or its E8M0
 * byte (on a GPU through the read-only cache: no kernel writes the scales
 * it quantizes with). */
RESHARD_QD inline uint32_t scale_word(int kind, const void *scales,
                                      int64_t block) {
#if defined(__CUDA_ARCH__)
  if (kind == kQuantMx)
    return __ldg(static_cast<const uint8_t *>(scales) + block);
  return __ldg(static_cast<const unsigned *>(scales) + block);
#else
  if (kind == kQuantMx)
    return static_cast<const uint8_t *>(scales)[block];
  uint32_t w;
  memcpy(&w, static_cast<const uint8_t *>(scales) + 4 * block, 4);
  return w;
#endif
}

/* What x becomes under a block's scale word before its rounding to
 * e4m3: x / scale, or x * 2^-e (MX). */
RESHARD_QD inline float quant_quotient(int kind, float x, uint32_t word) {
  return kind == kQuantMx ? mx_quotient(x, static_cast<int>(word) - 127)
                          : div_rn(x, bits_float(word));
}

/* x quantized with a block's scale word. */
RESHARD_QD inline uint8_t quantize_word(int kind, float x, uint32_t word) {
  uint8_t q;
  return nan_e4m3(x, &q) ? q : e4m3_from_number(quant_quotient(kind, x, word));
}

/* One block's quantization of x: its fp32 scale, or its E8M0 byte. */
RESHARD_QD inline uint8_t quantize_with(int kind, float x, const void *scales,
                                        int64_t block) {
  return quantize_word(kind, x, scale_word(kind, scales, block));
}

/* A source shard whose block scales are known (quantize_shard_host with a
 * null `out`): the fused pack quantizes any of its elements, by local
 * row-major index, as it packs them. */
struct QuantSource {
  int kind, input;
  ShardBlocks sb;
  const void *in;     /* the caller's shard, `input` elements */
  const void *scales; /* one per block, row-major over the blocks */
};

/* The block of local index x along a dim cut at cuts[0..n]. */
inline int64_t block_at(const int64_t *cuts, int64_t n, int64_t x) {
  int64_t lo = 0, hi = n; /* cuts[lo] <= x < cuts[hi] */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    (cuts[mid] <= x ? lo : hi) = mid;
  }
  return lo;
}

/* Elements [i, i + n) of the shard (local row-major) quantized into out,
 * in order; the caller runs it under HostFloatDefaults. */
inline void quantize_elements(const QuantSource &s, int64_t i, int64_t n,
                              uint8_t *out) {
  if (n <= 0)
    return;
  const int64_t nd = s.sb.ndim, last = nd - 1;
  if (nd == 0) { /* a scalar: one element, one block */
    *out = quantize_with(s.kind, load_input(s.in, 0, s.input), s.scales, 0);
    return;
  }
  const int64_t *shape = s.sb.shape, *nb = s.sb.nblocks;
  int64_t at[64];
  for (int64_t d = last, rest = i; d >= 0; --d) {
    at[d] = rest % shape[d];
    rest /= shape[d];
  }
  while (n > 0) {
    int64_t outer = 0; /* the block row of the dims before the last */
    for (int64_t d = 0; d < last; ++d)
      outer = outer * nb[d] + block_at(s.sb.cuts[d], nb[d], at[d]);
    const int64_t *cuts = s.sb.cuts[last];
    int64_t row = shape[last] - at[last] < n ? shape[last] - at[last] : n;
    int64_t k = block_at(cuts, nb[last], at[last]);
    for (int64_t j = 0; j < row; ++j) {
      while (at[last] + j >= cuts[k + 1])
        ++k;
      *out++ = quantize_with(s.kind, load_input(s.in, i + j, s.input), s.scales,
                             outer * nb[last] + k);
    }
    i += row;
    n -= row;
    at[last] += row;
    for (int64_t d = last; d > 0 && at[d] == shape[d]; --d) {
      at[d] = 0;
      ++at[d - 1];
    }
  }
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_QUANTIZE_H */
