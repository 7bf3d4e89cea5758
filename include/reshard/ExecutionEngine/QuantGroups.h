/*===- QuantGroups.h - the fused pack by groups -----------------*- C++ -*-===*
 *
 * The fused pack's per-thread work where the last dim is one run, laid
 * out like a plain copy: each warp a span of the box's groups, each lane
 * every 32nd group of it. A group is W (4 or 8) neighbouring source
 * elements of one row from an element index that is a multiple of W
 * (fewer at a run's ends): one or two 8- to 16-byte loads, one W-byte
 * store. Where a row starts, and its first block, are 32-bit divisions by
 * constants (every index they divide is below 2^31), done once per row a
 * lane meets; the element type, kind and width are template arguments.
 * Elements of one block without a NaN, the common case, are converted
 * two at a time, with no test an element. (On an H200 a kernel of this shape,
 * four elements a thread, packed a DeepSeek-V3 expert shard as fast as
 * cudaMemcpy2D packs it at full precision, where a thread block per piece of
 * row, with row starts in shared memory, took 2.4 times as long: BENCHMARKS.md
 * section 5.)
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_QUANTGROUPS_H
#define RESHARD_EXECUTIONENGINE_QUANTGROUPS_H

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

/* A box as rows (quant_rows_of) cut into groups of `width` elements, with
 * what the walk from a group to its row and blocks needs of the shard:
 * everything a thread divides by, as QuantMagic32. */
struct QuantGroups {
  QuantCopyBox box; /* the rows: `run` within a shard row, loops by rows */
  int32_t groups;   /* the box's rows times per_row */
  uint32_t width;   /* elements a group: 4 or 8 */
  uint32_t per_row; /* groups a row meets: a run from any element */
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

/* `b` as groups of `width` (4 or 8), when the group kernel takes it: the
 * fast path's rows, the last dim one run, and every index the walk
 * divides below 2^31. */
inline bool quant_groups_of(const QuantLaunch &q, const QuantCopyBox &b,
                            int width, QuantGroups *p) {
  QuantRows r;
  if ((width != 4 && width != 8) || !quant_rows_of(q, b, &r) ||
      !quant_last_one_run(q))
    return false;
  const int64_t kLimit = int64_t(1) << 31;
  if (quant_shard_rows(q) >= kLimit)
    return false;
  int last = q.ndim - 1;
  for (int d = 0; d < q.ndim; ++d)
    if (q.shape[d] >= kLimit || q.block[d] >= kLimit || q.nblocks[d] >= kLimit)
      return false;
  int64_t w = q.shape[last], per_row = (r.box.run + 2 * width - 2) / width;
  if (r.rows >= kLimit / per_row)
    return false;
  p->box = r.box;
  p->groups = static_cast<int32_t>(r.rows * per_row);
  p->width = static_cast<uint32_t>(width);
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
 * with the groups' divisors: a run's blocks start at the run). */
RESHARD_QD inline int64_t quant_group_first_block(const QuantGroups &p,
                                                  int kind, uint32_t line) {
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

/* Group e: its source elements [lo, lo + n) (n = 0 past a row's end), the
 * destination byte of lo, the column of lo, and its row's first block. */
struct QuantGroup {
  int64_t lo, to, first;
  uint32_t x;
  int n;
};

/* Row i of the box: its first group's index, where its run starts in the
 * source and the destination, and its shard row's first block. */
struct QuantGroupRow {
  uint32_t e0;
  int64_t from, to, first;
};

RESHARD_QD inline QuantGroupRow quant_group_row(const QuantGroups &p, int kind,
                                                uint32_t i) {
  const QuantCopyBox &b = p.box;
  QuantGroupRow r;
  r.e0 = i * p.per_row;
  r.from = b.from;
  r.to = b.to;
  uint32_t line = p.line0;
  for (int64_t l = b.n - 1; l >= 0; --l) {
    uint32_t up = l > 0 ? quant_div32(i, p.count_div[l]) : 0;
    uint32_t digit = i - up * static_cast<uint32_t>(b.loops[3 * l]);
    r.from += int64_t(digit) * b.loops[3 * l + 1];
    r.to += int64_t(digit) * b.loops[3 * l + 2];
    line += digit * p.line_step[l];
    i = up;
  }
  r.first = quant_group_first_block(p, kind, line);
  return r;
}

/* Group j of a row (below per_row), in 32 bits from the row's start: the
 * run and W j + W are below 2^31 + 2^4. */
template <int W>
RESHARD_QD inline QuantGroup
quant_group_in_row(const QuantGroups &p, const QuantGroupRow &row, uint32_t j) {
  uint32_t skew = static_cast<uint32_t>(row.from) & (W - 1);
  uint32_t run = static_cast<uint32_t>(p.box.run), at = W * j;
  uint32_t lo = at > skew ? at - skew : 0; /* the group's first element */
  uint32_t hi = at + W - skew < run ? at + W - skew : run;
  QuantGroup r;
  r.n = hi > lo ? static_cast<int>(hi - lo) : 0;
  r.lo = row.from + lo;
  r.to = row.to + lo;
  r.x = p.x0 + lo;
  r.first = row.first;
  return r;
}

template <int W>
RESHARD_QD inline QuantGroup quant_group_at(const QuantGroups &p, int kind,
                                            uint32_t e) {
  QuantGroupRow row = quant_group_row(p, kind, quant_div32(e, p.per_row_div));
  return quant_group_in_row<W>(p, row, e - row.e0);
}

/* Source elements [lo, lo + n) of a group (n <= W) into `v`: on a GPU,
 * for a whole group when `wide` (the source is at an address of W
 * elements), 8- or 16-byte loads, read-only cached. */
template <int Input, int W>
RESHARD_QD inline void quant_group_load(const void *in, int64_t lo, int n,
                                        bool wide, float *v) {
#if defined(__CUDA_ARCH__)
  if (wide && n == W) {
    const int kWords = W * (Input == kQuantF32 ? 4 : 2) / 4;
    uint32_t w[kWords];
    if (kWords == 2) {
      uint2 u = __ldg(static_cast<const uint2 *>(in) + lo / W);
      w[0] = u.x;
      w[1] = u.y;
    } else {
      const uint4 *at = static_cast<const uint4 *>(in) + lo / W * (kWords / 4);
      for (int c = 0; c < kWords / 4; ++c) {
        uint4 u = __ldg(at + c);
        w[4 * c] = u.x;
        w[4 * c + 1] = u.y;
        w[4 * c + 2] = u.z;
        w[4 * c + 3] = u.w;
      }
    }
    for (int k = 0; k < W; ++k) {
      if (Input == kQuantF32) {
        v[k] = bits_float(w[k]);
      } else {
        uint16_t h = static_cast<uint16_t>(w[k / 2] >> (16 * (k % 2)));
        v[k] = Input == kQuantBF16 ? bf16_to_float(h) : f16_to_float(h);
      }
    }
    return;
  }
#else
  (void)wide;
#endif
  for (int k = 0; k < W; ++k)
    if (k < n)
      v[k] = load_input(in, lo + k, Input);
}

/* Group e's source values (when it is not empty): the first half of a
 * thread's work, apart so that a thread can have several loads in
 * flight. */
template <int Input, int W>
RESHARD_QD inline QuantGroup quant_group_fetch(const QuantGroups &p, int kind,
                                               const void *in, uint32_t e,
                                               bool wide, float *v) {
  QuantGroup a = quant_group_at<W>(p, kind, e);
  if (a.n > 0)
    quant_group_load<Input, W>(in, a.lo, a.n, wide, v);
  return a;
}

/* A group's W bytes, little end first, at `at`: on a GPU one 4- or 8-byte
 * store for a whole group where the destination allows. */
RESHARD_QD inline void quant_group_store(uint8_t *at, const uint32_t *bytes,
                                         int n, int width) {
#if defined(__CUDA_ARCH__)
  if (n == width && reinterpret_cast<uintptr_t>(at) % width == 0) {
    if (width == 4)
      *reinterpret_cast<uint32_t *>(at) = bytes[0];
    else
      *reinterpret_cast<uint2 *>(at) = make_uint2(bytes[0], bytes[1]);
    return;
  }
#else
  (void)width;
#endif
  for (int k = 0; k < n; ++k)
    at[k] = static_cast<uint8_t>(bytes[k / 4] >> (8 * (k % 4)));
}

/* Whether no value of a whole group is a NaN (its largest magnitude's
 * bits are at most Inf's). */
template <int W> RESHARD_QD inline bool quant_group_has_no_nan(const float *v) {
  uint32_t most = 0;
  for (int k = 0; k < W; ++k) {
    uint32_t m = float_bits(v[k]) & 0x7fffffffu;
    most = m > most ? m : most;
  }
  return most <= 0x7f800000u;
}

/* The second half, for a group that is not empty: its values quantized
 * into `out`. A whole group within one block and without a NaN (the
 * common case) takes no test an element and two elements a conversion;
 * else an element at a time, the scale looked up once per block the
 * group meets. */
template <int Kind, int W>
RESHARD_QD inline void quant_group_put(const QuantGroups &p, const void *scales,
                                       const QuantGroup &a, const float *v,
                                       uint8_t *out) {
  uint32_t c = quant_div32(a.x, p.block_div), next = (c + 1) * p.block;
  uint32_t word = scale_word(Kind, scales, a.first + c);
  uint32_t bytes[W / 4];
  if (a.n == W && a.x + W <= next && quant_group_has_no_nan<W>(v)) {
    for (int k = 0; k < W; k += 2) {
      uint32_t pair = e4m3x2_from_numbers(quant_quotient(Kind, v[k], word),
                                          quant_quotient(Kind, v[k + 1], word));
      bytes[k / 4] = k % 4 ? bytes[k / 4] | pair << 16 : pair;
    }
  } else {
    for (int k = 0; k < W / 4; ++k)
      bytes[k] = 0;
    for (int k = 0; k < W; ++k)
      if (k < a.n) {
        if (a.x + k == next) { /* the group crosses into the next block */
          next += p.block;
          word = scale_word(Kind, scales, a.first + ++c);
        }
        bytes[k / 4] |= uint32_t(quantize_word(Kind, v[k], word))
                        << (8 * (k % 4));
      }
  }
  quant_group_store(out + a.to, bytes, a.n, W);
}

/* Group `a` (none past a row's end) loaded and quantized into `out`. */
template <int Input, int Kind, int W>
RESHARD_QD inline void quant_group_pack(const QuantGroups &p, const void *in,
                                        const void *scales, const QuantGroup &a,
                                        bool wide, uint8_t *out) {
  if (a.n <= 0)
    return;
  float v[W];
  quant_group_load<Input, W>(in, a.lo, a.n, wide, v);
  quant_group_put<Kind, W>(p, scales, a, v, out);
}

/* One group's work: group e quantized into `out`. */
template <int Input, int Kind, int W>
RESHARD_QD inline void quant_group(const QuantGroups &p, const void *in,
                                   const void *scales, uint32_t e, bool wide,
                                   uint8_t *out) {
  quant_group_pack<Input, Kind, W>(p, in, scales, quant_group_at<W>(p, Kind, e),
                                   wide, out);
}

/* The groups a warp takes: a span of whole strides of kQuantWarp groups,
 * [*begin, *end), warp `warp` of `warps`, so that its lanes read
 * neighbouring groups and each meets a row's walk once per row. */
const uint32_t kQuantWarp = 32;

RESHARD_QD inline void quant_warp_span(uint32_t groups, uint32_t warp,
                                       uint32_t warps, uint32_t *begin,
                                       uint32_t *end) {
  /* groups < 2^31: strides < 2^26, and every product below 2^32. */
  uint32_t strides = (groups + kQuantWarp - 1) / kQuantWarp;
  uint32_t each = (strides + warps - 1) / warps;
  uint32_t first = warp * each;
  first = first < strides ? first : strides;
  uint32_t last = first + each < strides ? first + each : strides;
  *begin = first * kQuantWarp < groups ? first * kQuantWarp : groups;
  *end = last * kQuantWarp < groups ? last * kQuantWarp : groups;
}

/* One lane's work: groups first, first + kQuantWarp, ... below `end`, the
 * walk to a row done once per row the lane meets (a row has many strides:
 * a DeepSeek-V3 expert shard's half row, 1,152 groups of 8, has 36). */
template <int Input, int Kind, int W>
RESHARD_QD inline void quant_lane(const QuantGroups &p, const void *in,
                                  const void *scales, uint32_t first,
                                  uint32_t end, bool wide, uint8_t *out) {
  if (first >= end)
    return;
  QuantGroupRow row =
      quant_group_row(p, Kind, quant_div32(first, p.per_row_div));
  for (uint32_t e = first; e < end; e += kQuantWarp) {
    if (e - row.e0 >= p.per_row)
      row = quant_group_row(p, Kind, quant_div32(e, p.per_row_div));
    quant_group_pack<Input, Kind, W>(
        p, in, scales, quant_group_in_row<W>(p, row, e - row.e0), wide, out);
  }
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_QUANTGROUPS_H */
