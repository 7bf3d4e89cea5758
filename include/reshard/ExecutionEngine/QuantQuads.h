/*===- QuantQuads.h - the fused pack by quads --------------------*- C++ -*-===*
 *
 * The fused pack's per-thread work where the last dim is one run, laid
 * out like a plain copy: a grid-stride loop over the box's quads, a thread
 * each. A quad is four neighbouring source elements of one row from an
 * element index that is a multiple of 4 (fewer at a run's ends): one 8- or
 * 16-byte load, one 4-byte store. Where the quad's row starts, and its
 * first block, are 32-bit divisions by constants (every index they divide
 * is below 2^31); the element type and the kind are template arguments.
 * (On an H200 a kernel of this shape packed a DeepSeek-V3 expert shard as
 * fast as cudaMemcpy2D packs it at full precision, where a thread block
 * per piece of row, with row starts in shared memory, took 2.4 times as
 * long: BENCHMARKS.md section 5.)
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_QUANTQUADS_H
#define RESHARD_EXECUTIONENGINE_QUANTQUADS_H

#include "reshard/ExecutionEngine/QuantRows.h"

namespace reshard {
namespace engine {

/* x / d for 0 <= x < 2^31 and 1 <= d < 2^31 in 32-bit arithmetic: with
 * s = ceil(log2 d) and m = floor(2^32 (2^s - d) / d) + 1 (below 2^32),
 * x / d = (mulhi(x, m) + x) >> s. */
struct QuantMagic32 {
  uint32_t mul, shift;
};

inline QuantMagic32 quant_magic32(int64_t d) {
  if (d < 1) /* an empty dim or loop: nothing is divided by it */
    d = 1;
  uint32_t s = 0;
  while ((int64_t(1) << s) < d)
    ++s;
  uint64_t m = ((uint64_t(1) << 32) * ((uint64_t(1) << s) - d)) / d + 1;
  QuantMagic32 r = {static_cast<uint32_t>(m), s};
  return r;
}

RESHARD_QD inline uint32_t quant_div32(uint32_t x, QuantMagic32 d) {
#if defined(__CUDA_ARCH__)
  uint32_t hi = __umulhi(x, d.mul);
#else
  uint32_t hi = static_cast<uint32_t>((uint64_t(x) * d.mul) >> 32);
#endif
  return (hi + x) >> d.shift;
}

/* A box as rows (quant_rows_of) cut into quads, with what the walk from a
 * quad to its row and blocks needs of the shard: everything a thread
 * divides by, as QuantMagic32. */
struct QuantQuads {
  QuantCopyBox box; /* the rows: `run` within a shard row, loops by rows */
  int32_t quads;    /* the box's rows times per_row */
  uint32_t per_row; /* quads a row meets: a run from any element */
  uint32_t line0;   /* the shard row of the box's first run */
  uint32_t x0;      /* its column */
  uint32_t block;   /* the block size along the last dim */
  int32_t ndim;
  QuantMagic32 per_row_div, block_div;
  uint32_t line_step[kQuantMaxDims];     /* per loop: shard rows a step */
  QuantMagic32 count_div[kQuantMaxDims]; /* per loop: its count */
  /* Per dim but the last: its size, blocks and runs (where each starts,
   * and its first block). */
  uint32_t size[kQuantMaxDims], nblocks[kQuantMaxDims], nruns[kQuantMaxDims];
  QuantMagic32 size_div[kQuantMaxDims], block_dim_div[kQuantMaxDims];
  uint32_t run_start[kQuantMaxDims][kQuantMaxRuns];
  uint32_t run_block[kQuantMaxDims][kQuantMaxRuns];
  int64_t row_blocks; /* blocks along the last dim */
};

/* `b` as quads, when the quad kernel takes it: the fast path's rows, the
 * last dim one run, and every index the walk divides below 2^31. */
inline bool quant_quads_of(const QuantLaunch &q, const QuantCopyBox &b,
                           QuantQuads *p) {
  QuantRows r;
  if (!quant_rows_of(q, b, &r) || !quant_last_one_run(q))
    return false;
  const int64_t kLimit = int64_t(1) << 31;
  if (quant_shard_rows(q) >= kLimit)
    return false;
  int last = q.ndim - 1;
  for (int d = 0; d < q.ndim; ++d)
    if (q.shape[d] >= kLimit || q.block[d] >= kLimit || q.nblocks[d] >= kLimit)
      return false;
  int64_t w = q.shape[last], per_row = (r.box.run + 6) / 4;
  if (r.rows >= kLimit / per_row)
    return false;
  p->box = r.box;
  p->quads = static_cast<int32_t>(r.rows * per_row);
  p->per_row = static_cast<uint32_t>(per_row);
  p->per_row_div = quant_magic32(per_row);
  p->line0 = static_cast<uint32_t>(r.box.from / w);
  p->x0 = static_cast<uint32_t>(r.x0);
  p->block = static_cast<uint32_t>(q.block[last]);
  p->block_div = quant_magic32(q.block[last]);
  p->ndim = q.ndim;
  p->row_blocks = q.nblocks[last];
  for (int64_t l = 0; l < r.box.n; ++l) {
    p->line_step[l] = static_cast<uint32_t>(r.box.loops[3 * l + 1] / w);
    p->count_div[l] = quant_magic32(r.box.loops[3 * l]);
  }
  for (int d = 0; d < last; ++d) {
    p->size[d] = static_cast<uint32_t>(q.shape[d]);
    p->size_div[d] = quant_magic32(q.shape[d]);
    p->block_dim_div[d] = quant_magic32(q.block[d]);
    p->nblocks[d] = static_cast<uint32_t>(q.nblocks[d]);
    p->nruns[d] = static_cast<uint32_t>(q.nruns[d]);
    int64_t start = 0, first = 0;
    for (int64_t k = 0; k < q.nruns[d]; ++k) {
      p->run_start[d][k] = static_cast<uint32_t>(start);
      p->run_block[d][k] = static_cast<uint32_t>(first);
      start += q.run[d][k];
      first += (q.run[d][k] + q.block[d] - 1) / q.block[d];
    }
  }
  return true;
}

/* The first block of shard row `line` (what quant_row_first_block finds,
 * with the quads' divisors: a run's blocks start at the run). */
RESHARD_QD inline int64_t quant_quad_first_block(const QuantQuads &p, int kind,
                                                 uint32_t line) {
  if (kind == kQuantMx)
    return int64_t(line) * p.row_blocks;
  int64_t row = 0, stride = 1;
  for (int d = p.ndim - 2; d >= 0; --d) {
    uint32_t up = d > 0 ? quant_div32(line, p.size_div[d]) : 0;
    uint32_t x = line - up * p.size[d], k = 0;
    while (k + 1 < p.nruns[d] && x >= p.run_start[d][k + 1])
      ++k;
    row += stride * (p.run_block[d][k] +
                     quant_div32(x - p.run_start[d][k], p.block_dim_div[d]));
    stride *= p.nblocks[d];
    line = up;
  }
  return row * p.row_blocks;
}

/* Quad e: its source elements [lo, lo + n) (n = 0 past a row's end), the
 * destination byte of lo, the column of lo, and its row's first block. */
struct QuantQuad {
  int64_t lo, to, first;
  uint32_t x;
  int n;
};

RESHARD_QD inline QuantQuad quant_quad_at(const QuantQuads &p, int kind,
                                          uint32_t e) {
  const QuantCopyBox &b = p.box;
  uint32_t i = quant_div32(e, p.per_row_div), j = e - i * p.per_row;
  uint32_t line = p.line0;
  int64_t from = b.from, to = b.to;
  for (int64_t l = b.n - 1; l >= 0; --l) {
    uint32_t up = l > 0 ? quant_div32(i, p.count_div[l]) : 0;
    uint32_t digit = i - up * static_cast<uint32_t>(b.loops[3 * l]);
    from += int64_t(digit) * b.loops[3 * l + 1];
    to += int64_t(digit) * b.loops[3 * l + 2];
    line += digit * p.line_step[l];
    i = up;
  }
  int64_t start = (from & ~int64_t(3)) + 4 * int64_t(j), end = from + b.run;
  QuantQuad r;
  r.lo = start > from ? start : from;
  int64_t hi = start + 4 < end ? start + 4 : end;
  r.n = hi > r.lo ? static_cast<int>(hi - r.lo) : 0;
  r.to = to + (r.lo - from);
  r.x = p.x0 + static_cast<uint32_t>(r.lo - from);
  r.first = quant_quad_first_block(p, kind, line);
  return r;
}

/* Source elements [lo, lo + n) of a quad (n <= 4) into `v`: on a GPU one
 * 8- or 16-byte load for a whole quad when `wide` (the source is at an
 * address of four elements), read-only cached. */
template <int Input>
RESHARD_QD inline void quant_quad_load(const void *in, int64_t lo, int n,
                                       bool wide, float *v) {
#if defined(__CUDA_ARCH__)
  if (wide && n == 4) {
    if (Input == kQuantF32) {
      uint4 w = __ldg(static_cast<const uint4 *>(in) + lo / 4);
      v[0] = bits_float(w.x);
      v[1] = bits_float(w.y);
      v[2] = bits_float(w.z);
      v[3] = bits_float(w.w);
      return;
    }
    uint2 w = __ldg(static_cast<const uint2 *>(in) + lo / 4);
    uint16_t h[4] = {uint16_t(w.x), uint16_t(w.x >> 16), uint16_t(w.y),
                     uint16_t(w.y >> 16)};
    for (int k = 0; k < 4; ++k)
      v[k] = Input == kQuantBF16 ? bf16_to_float(h[k]) : f16_to_float(h[k]);
    return;
  }
#else
  (void)wide;
#endif
  for (int k = 0; k < 4; ++k)
    if (k < n)
      v[k] = load_input(in, lo + k, Input);
}

/* Quad e's source values (when it is not empty): the first half of a
 * thread's work, apart so that a thread can have several loads in
 * flight. */
template <int Input>
RESHARD_QD inline QuantQuad quant_quad_fetch(const QuantQuads &p, int kind,
                                             const void *in, uint32_t e,
                                             bool wide, float *v) {
  QuantQuad a = quant_quad_at(p, kind, e);
  if (a.n > 0)
    quant_quad_load<Input>(in, a.lo, a.n, wide, v);
  return a;
}

/* The second half, for a quad that is not empty: its values quantized
 * into `out`, the scale looked up once per block the quad meets. */
template <int Kind>
RESHARD_QD inline void quant_quad_put(const QuantQuads &p, const void *scales,
                                      const QuantQuad &a, const float *v,
                                      uint8_t *out) {
  uint32_t c = quant_div32(a.x, p.block_div), next = (c + 1) * p.block;
  uint32_t word = scale_word(Kind, scales, a.first + c), bytes = 0;
  for (int k = 0; k < 4; ++k)
    if (k < a.n) {
      if (a.x + k == next) { /* the quad crosses into the next block */
        next += p.block;
        word = scale_word(Kind, scales, a.first + ++c);
      }
      bytes |= uint32_t(quantize_word(Kind, v[k], word)) << (8 * k);
    }
  uint8_t *at = out + a.to;
#if defined(__CUDA_ARCH__)
  if (a.n == 4 && reinterpret_cast<uintptr_t>(at) % 4 == 0) {
    *reinterpret_cast<uint32_t *>(at) = bytes;
    return;
  }
#endif
  for (int k = 0; k < 4; ++k)
    if (k < a.n)
      at[k] = static_cast<uint8_t>(bytes >> (8 * k));
}

/* One thread's work: quad e quantized into `out`. */
template <int Input, int Kind>
RESHARD_QD inline void quant_quad(const QuantQuads &p, const void *in,
                                  const void *scales, uint32_t e, bool wide,
                                  uint8_t *out) {
  QuantQuad a = quant_quad_at(p, Kind, e);
  if (a.n <= 0)
    return;
  float v[4];
  quant_quad_load<Input>(in, a.lo, a.n, wide, v);
  quant_quad_put<Kind>(p, scales, a, v, out);
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_QUANTQUADS_H */
