/*===- QuantRows.h - a shard walked by rows ----------------------*- C++ -*-===*
 *
 * The quantizer's fast path, for shards whose rows are below 2^31
 * elements and boxes that step by whole rows: the work laid out by rows
 * of the shard (QuantRows), and the scales' amax a segment (one row's
 * elements of one block column) at a time. The scales take it whatever the runs
 * (a thread per segment walks them once); the fused pack where the last dim is
 * one run (the common case: fused runs cut dim 0), so that blocks along it
 * start at multiples of its block size and an element's block is a
 * division by a constant (QuantGroups.h).
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_QUANTROWS_H
#define RESHARD_EXECUTIONENGINE_QUANTROWS_H

#include "reshard/ExecutionEngine/QuantLaunch.h"

namespace reshard {
namespace engine {

/* The block, along dim d, of local coordinate x: its index among the
 * dim's blocks (a block starts at each run). */
RESHARD_QD inline int64_t quant_dim_block(const QuantLaunch &q, int d,
                                          int64_t x) {
  int64_t j = 0, local = 0;
  for (int r = 0; r < q.nruns[d]; ++r) {
    int64_t len = q.run[d][r];
    if (x < local + len)
      return j + quant_udiv(x - local, q.block[d]);
    j += quant_udiv(len + q.block[d] - 1, q.block[d]);
    local += len;
  }
  return j;
}

/* The first block of shard row `line` (the row-major index over every dim
 * but the last): blocks of MX are 1 along those dims, so their row of
 * blocks is the row itself. */
RESHARD_QD inline int64_t quant_row_first_block(const QuantLaunch &q,
                                                int64_t line) {
  int last = q.ndim - 1;
  int64_t row = 0, stride = 1;
  if (q.kind == kQuantMx) {
    row = line;
  } else {
    for (int d = last - 1; d >= 0; --d) {
      int64_t up = quant_udiv(line, q.shape[d]);
      row += quant_dim_block(q, d, line - up * q.shape[d]) * stride;
      line = up;
      stride *= q.nblocks[d];
    }
  }
  return row * q.nblocks[last];
}

/* A box whose run lies within one row of the shard, from column x0, and
 * whose loops step by whole rows. */
struct QuantRows {
  QuantCopyBox box;
  int64_t rows, x0; /* rows: the loops' iterations */
};

/* Whether the last dim is one run: its blocks then start at multiples of
 * its block size. */
RESHARD_QD inline bool quant_last_one_run(const QuantLaunch &q) {
  return q.nruns[q.ndim - 1] == 1;
}

/* `b` as rows, when the fast path takes it: a run over whole rows becomes
 * one more loop. */
inline bool quant_rows_of(const QuantLaunch &q, const QuantCopyBox &b,
                          QuantRows *r) {
  if (q.ndim == 0)
    return false;
  int last = q.ndim - 1;
  int64_t w = q.shape[last];
  const int64_t kLimit = int64_t(1) << 31;
  if (w <= 0 || w >= kLimit || q.block[last] >= kLimit)
    return false;
  if (q.kind == kQuantMx)
    for (int d = 0; d < last; ++d)
      if (q.block[d] != 1)
        return false;
  r->box = b;
  r->x0 = b.from % w;
  if (r->x0 + b.run > w) {
    if (r->x0 != 0 || b.run % w != 0 || b.n >= kQuantMaxDims)
      return false;
    QuantCopyBox &e = r->box;
    e.loops[3 * e.n] = b.run / w;
    e.loops[3 * e.n + 1] = w;
    e.loops[3 * e.n + 2] = w;
    e.run = w;
    ++e.n;
  }
  r->rows = 1;
  for (int64_t l = 0; l < r->box.n; ++l) {
    if (r->box.loops[3 * l + 1] % w != 0)
      return false;
    r->rows *= r->box.loops[3 * l];
  }
  return true;
}

/* The amax reads 16 bytes at a time (a group: 8 16-bit or 4 fp32
 * elements) where the addresses allow, since a GPU moves bytes at its
 * bandwidth only in wide accesses. */
RESHARD_QD inline int quant_group_elements(int input) {
  return static_cast<int>(16 / quant_input_bytes(input));
}

#if defined(__CUDA_ARCH__)
/* The 16 bytes at source element x (a 16-byte address): a group of 4
 * fp32 or 8 16-bit elements, as fp32. */
__device__ inline void quant_load16(const void *in, int64_t x, int input,
                                    float *v) {
  uint4 w = *reinterpret_cast<const uint4 *>(static_cast<const uint8_t *>(in) +
                                             x * quant_input_bytes(input));
  uint32_t words[4] = {w.x, w.y, w.z, w.w};
  for (int i = 0; i < 8; ++i) {
    if (input == kQuantF32) {
      if (i < 4)
        v[i] = bits_float(words[i]);
      continue;
    }
    uint16_t h = static_cast<uint16_t>(words[i / 2] >> (16 * (i % 2)));
    v[i] = input == kQuantBF16 ? bf16_to_float(h) : f16_to_float(h);
  }
}
#endif

/* The whole shard as one box of rows (a receiver's payload): false where
 * the fast path does not take it. */
inline bool quant_whole_rows(const QuantLaunch &q, QuantRows *r) {
  if (q.ndim == 0 || q.nblocks[q.ndim - 1] == 0)
    return false;
  int64_t w = q.shape[q.ndim - 1];
  QuantCopyBox whole;
  whole.from = whole.to = 0;
  whole.run = w;
  whole.n = 1;
  whole.loops[0] = quant_shard_rows(q);
  whole.loops[1] = whole.loops[2] = w;
  return quant_rows_of(q, whole, r);
}

/* The amax of source elements [lo, hi), as bits: on a GPU 16 bytes at a
 * time from the first 16-byte address on. */
RESHARD_QD inline uint32_t quant_range_amax(const void *in, int input,
                                            int64_t lo, int64_t hi) {
  uint32_t m = 0;
  int64_t x = lo;
#if defined(__CUDA_ARCH__)
  int g = quant_group_elements(input);
  int64_t eb = quant_input_bytes(input);
  /* `in` is aligned to its elements (the entry points check it), so
   * some element starts each 16-byte address. */
  uintptr_t base = reinterpret_cast<uintptr_t>(in);
  for (; x < hi && (base + x * eb) % 16 != 0; ++x) {
    uint32_t a = finite_abs_bits(load_input(in, x, input));
    m = a > m ? a : m;
  }
  for (; x + g <= hi; x += g) {
    float v[8];
    quant_load16(in, x, input, v);
    for (int i = 0; i < 8; ++i) { /* constant indices: v stays in registers */
      uint32_t a = i < g ? finite_abs_bits(v[i]) : 0u;
      m = a > m ? a : m;
    }
  }
#endif
  for (; x < hi; ++x) {
    uint32_t a = finite_abs_bits(load_input(in, x, input));
    m = a > m ? a : m;
  }
  return m;
}

/* The amax of one segment, the elements of block column `c` in shard row
 * `line`, as bits; `block` its block. */
RESHARD_QD inline uint32_t quant_segment_amax(const QuantLaunch &q,
                                              const void *in, int64_t line,
                                              int64_t c, int64_t *block) {
  int last = q.ndim - 1;
  int64_t lo = 0, hi = 0;
  quant_dim_block_range(q, last, c, &lo, &hi);
  *block = quant_row_first_block(q, line) + c;
  int64_t base = line * q.shape[last];
  return quant_range_amax(in, q.input, base + lo, base + hi);
}

/* The segments of a shard: its rows times its block columns. */
RESHARD_QD inline int64_t quant_segment_count(const QuantLaunch &q) {
  return q.ndim ? quant_shard_rows(q) * q.nblocks[q.ndim - 1] : 0;
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_QUANTROWS_H */
