/*===- QuantizeKernels.h - FP8 quantization of shards on a GPU --*- C++ -*-===*
 *
 * The NCCL backend's quantizer, with the scalar functions of Quantize.h
 * that the host loops use, so that both round alike. The shard's blocks
 * are described compactly (per dim: the runs of the shard in local order
 * and the block size; a block starts at each run), as the plan tables
 * state them. Three shapes of work:
 *  - the scales: a thread per segment (one row's elements of one block
 *    column), then the blocks' scales from their amax;
 *  - the fused pack (and local copies, and a receiver's whole shard): a
 *    thread per quad (four neighbouring elements of a row) where the last
 *    dim is one run, else a thread per span of a run;
 *  - the general kernel, a thread block per block, for rows of 2^31
 *    elements or more.
 * Each thread's work is a host-and-device function, so that the unit tests
 * run the same code on the host, every thread emulated.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_QUANTIZEKERNELS_H
#define RESHARD_EXECUTIONENGINE_QUANTIZEKERNELS_H

#include "reshard/ExecutionEngine/Quantize.h"

namespace reshard {
namespace engine {

/* Limits of the by-value launch description (kernel parameters). */
const int kQuantMaxDims = 8;
const int kQuantMaxRuns = 16;

/* One shard to quantize: its shape, block sizes, and per dim the run
 * lengths in local order and the number of blocks. */
struct QuantLaunch {
  int32_t kind, input, ndim, pad;
  int64_t shape[kQuantMaxDims];
  int64_t block[kQuantMaxDims];
  int64_t nruns[kQuantMaxDims];
  int64_t run[kQuantMaxDims][kQuantMaxRuns];
  int64_t nblocks[kQuantMaxDims];
};

/* Fills `q` from a plan's runs record (per dim: a count, then the run
 * lengths) and block sizes; false when the shard has more dims or runs
 * than the description holds. */
inline bool make_quant_launch(int kind, int input, int64_t ndim,
                              const int64_t *shape, const int64_t *blocks,
                              const int64_t *runs, QuantLaunch *q) {
  if (ndim > kQuantMaxDims)
    return false;
  q->kind = kind;
  q->input = input;
  q->ndim = static_cast<int32_t>(ndim);
  q->pad = 0;
  for (int64_t d = 0; d < ndim; ++d) {
    q->shape[d] = shape[d];
    q->block[d] = blocks[d];
    int64_t n = *runs++;
    if (n > kQuantMaxRuns)
      return false;
    q->nruns[d] = n;
    q->nblocks[d] = 0;
    for (int64_t r = 0; r < n; ++r) {
      int64_t len = *runs++;
      q->run[d][r] = len;
      q->nblocks[d] += len / blocks[d] + (len % blocks[d] != 0);
    }
  }
  return true;
}

inline int64_t quant_launch_blocks(const QuantLaunch &q) {
  int64_t n = 1;
  for (int d = 0; d < q.ndim; ++d)
    n *= q.nblocks[d];
  return n;
}

/* a / b for non-negative a and positive b: in 32 bits where both fit (a
 * GPU divides 64-bit integers in software, many times slower). */
RESHARD_QD inline int64_t quant_udiv(int64_t a, int64_t b) {
  if (((a | b) >> 32) == 0)
    return static_cast<uint32_t>(a) / static_cast<uint32_t>(b);
  return a / b;
}

/* The local range [lo, hi) along dim d of the dim's block j (a block
 * starts at each run). */
RESHARD_QD inline void quant_dim_block_range(const QuantLaunch &q, int d,
                                             int64_t j, int64_t *lo,
                                             int64_t *hi) {
  int64_t local = 0;
  for (int r = 0; r < q.nruns[d]; ++r) {
    int64_t len = q.run[d][r];
    int64_t nb = quant_udiv(len + q.block[d] - 1, q.block[d]);
    if (j < nb) {
      *lo = local + j * q.block[d];
      *hi = *lo + q.block[d] < local + len ? *lo + q.block[d] : local + len;
      return;
    }
    j -= nb;
    local += len;
  }
}

/* The local box [lo, hi) of block `b` (row-major over nblocks). */
RESHARD_QD inline void quant_block_box(const QuantLaunch &q, int64_t b,
                                       int64_t *lo, int64_t *hi) {
  for (int d = q.ndim - 1; d >= 0; --d) {
    quant_dim_block_range(q, d, b % q.nblocks[d], &lo[d], &hi[d]);
    b /= q.nblocks[d];
  }
}

/* The rows of a shard: its elements over the last dim's. */
RESHARD_QD inline int64_t quant_shard_rows(const QuantLaunch &q) {
  int64_t rows = 1;
  for (int d = 0; d + 1 < q.ndim; ++d)
    rows *= q.shape[d];
  return rows;
}

/* The shard's linear index of element `e` (row-major) of box [lo, hi). */
RESHARD_QD inline int64_t quant_box_element(const QuantLaunch &q,
                                            const int64_t *lo,
                                            const int64_t *hi, int64_t e) {
  int64_t lin = 0, stride = 1;
  for (int d = q.ndim - 1; d >= 0; --d) {
    int64_t extent = hi[d] - lo[d];
    lin += (lo[d] + e % extent) * stride;
    e /= extent;
    stride *= q.shape[d];
  }
  return lin;
}

RESHARD_QD inline int64_t
quant_box_count(const QuantLaunch &q, const int64_t *lo, const int64_t *hi) {
  int64_t n = 1;
  for (int d = 0; d < q.ndim; ++d)
    n *= hi[d] - lo[d];
  return n;
}

/* Thread `t` of `nt`: the amax of its elements of block `b`, as the bits
 * of a non-negative float (integers compare them without any flush of
 * subnormals, whatever nvcc's -ftz). */
RESHARD_QD inline uint32_t quant_partial_amax(const QuantLaunch &q,
                                              const void *in, int64_t b, int t,
                                              int nt) {
  int64_t lo[kQuantMaxDims], hi[kQuantMaxDims];
  quant_block_box(q, b, lo, hi);
  uint32_t m = 0;
  for (int64_t e = t, n = quant_box_count(q, lo, hi); e < n; e += nt) {
    uint32_t a = finite_abs_bits(
        load_input(in, quant_box_element(q, lo, hi, e), q.input));
    m = a > m ? a : m;
  }
  return m;
}

/* Thread `t` of `nt`, given block `b`'s amax (bits): its elements' bytes,
 * and (thread 0) the block's scale. */
RESHARD_QD inline void quant_block_write(const QuantLaunch &q, const void *in,
                                         uint8_t *out, void *scales, int64_t b,
                                         int t, int nt, uint32_t amax_bits) {
  int64_t lo[kQuantMaxDims], hi[kQuantMaxDims];
  quant_block_box(q, b, lo, hi);
  float amax = bits_float(amax_bits), scale = 1.0f;
  int e8 = 0;
  if (q.kind == kQuantMx)
    e8 = mx_exponent(amax);
  else
    scale = block_scale(amax);
  if (t == 0) {
    if (q.kind == kQuantMx)
      static_cast<uint8_t *>(scales)[b] = static_cast<uint8_t>(e8 + 127);
    else
      memcpy(static_cast<uint8_t *>(scales) + 4 * b, &scale, 4);
  }
  if (!out) /* scales only: the fused pack quantizes the elements */
    return;
  for (int64_t e = t, n = quant_box_count(q, lo, hi); e < n; e += nt) {
    int64_t lin = quant_box_element(q, lo, hi, e);
    float x = load_input(in, lin, q.input);
    out[lin] =
        q.kind == kQuantMx ? quantize_mx(x, e8) : quantize_scaled(x, scale);
  }
}

/*===-- The fused pack ----------------------------------------------------===*/

/* Elements of a shard copied with quantization (the fused pack and the
 * holder's local copies): `n` loops of (count, source stride, destination
 * stride) around runs of `run` contiguous source elements, from source
 * element `from` to destination byte `to`; outer loops iterate first. */
struct QuantCopyBox {
  int64_t from, to, run, n;
  int64_t loops[3 * kQuantMaxDims];
};

/* The elements a box moves. */
RESHARD_QD inline int64_t quant_copy_count(const QuantCopyBox &b) {
  int64_t n = b.run;
  for (int64_t l = 0; l < b.n; ++l)
    n *= b.loops[3 * l];
  return n;
}

/* Element `e` of a box (row-major over the loops, then the run): its
 * source element and destination byte. */
RESHARD_QD inline void quant_copy_at(const QuantCopyBox &b, int64_t e,
                                     int64_t *from, int64_t *to) {
  int64_t pos = e % b.run;
  *from = b.from + pos;
  *to = b.to + pos;
  e /= b.run;
  for (int64_t l = b.n - 1; l >= 0; --l) {
    int64_t i = e % b.loops[3 * l];
    e /= b.loops[3 * l];
    *from += i * b.loops[3 * l + 1];
    *to += i * b.loops[3 * l + 2];
  }
}

/* The block (row-major over q.nblocks) of local element `lin`, and how
 * many elements from it on stay in that block along the last dim. */
RESHARD_QD inline int64_t quant_element_block(const QuantLaunch &q, int64_t lin,
                                              int64_t *left) {
  int64_t block = 0, stride = 1;
  *left = 1;
  for (int d = q.ndim - 1; d >= 0; --d) {
    int64_t x = lin % q.shape[d], j = 0, local = 0;
    lin /= q.shape[d];
    for (int r = 0; r < q.nruns[d]; ++r) {
      int64_t len = q.run[d][r];
      if (x < local + len) {
        int64_t k = (x - local) / q.block[d];
        j += k;
        if (d == q.ndim - 1) {
          int64_t end = local + (k + 1) * q.block[d];
          *left = (end < local + len ? end : local + len) - x;
        }
        break;
      }
      j += len / q.block[d] + (len % q.block[d] != 0);
      local += len;
    }
    block += j * stride;
    stride *= q.nblocks[d];
  }
  return block;
}

/* Elements [e0, e1) of box `b`, which stay within one of its runs:
 * quantized with their blocks' scales into `out` (at their destination
 * bytes). One thread's share of the fused pack, also run on the host by
 * the unit tests. */
RESHARD_QD inline void quant_copy_span(const QuantLaunch &q, const void *in,
                                       const void *scales,
                                       const QuantCopyBox &b, int64_t e0,
                                       int64_t e1, uint8_t *out) {
  int64_t from, to, left = 0, block = 0;
  quant_copy_at(b, e0, &from, &to);
  for (int64_t e = e0; e < e1; ++e, ++from, ++to, --left) {
    if (left == 0)
      block = quant_element_block(q, from, &left);
    out[to] =
        quantize_with(q.kind, load_input(in, from, q.input), scales, block);
  }
}

/* The spans a box's elements are cut into, kQuantSpan elements of a run
 * each (a thread's work: one block lookup per block it crosses). */
const int64_t kQuantSpan = 16;

RESHARD_QD inline int64_t quant_span_count(const QuantCopyBox &b) {
  return quant_copy_count(b) / b.run * ((b.run + kQuantSpan - 1) / kQuantSpan);
}

RESHARD_QD inline void quant_span(const QuantLaunch &q, const void *in,
                                  const void *scales, const QuantCopyBox &b,
                                  int64_t span, uint8_t *out) {
  int64_t per_run = (b.run + kQuantSpan - 1) / kQuantSpan;
  int64_t e0 = span / per_run * b.run + span % per_run * kQuantSpan;
  int64_t end = (span / per_run + 1) * b.run;
  quant_copy_span(q, in, scales, b, e0,
                  e0 + kQuantSpan < end ? e0 + kQuantSpan : end, out);
}

/*===-- The row kernels ---------------------------------------------------===*/
/* The fast path (rows below 2^31 elements, boxes that step by whole
 * rows): the work is laid out by rows of the shard. The scales take it
 * whatever the runs (a thread per segment walks them once). The fused
 * pack takes it where the last dim is one run (the common case: fused
 * runs cut dim 0), so that blocks along it start at multiples of its
 * block size and an element's block is a division by a constant. */

/* x / d for 0 <= x < 2^31 and 1 <= d < 2^31, as a multiplication by
 * quant_magic(d) = ceil(2^64 / d) (0 for d = 1): the error, x times less
 * than 2^-64, stays below 1/d. */
inline uint64_t quant_magic(int64_t d) {
  return d == 1 ? 0 : UINT64_MAX / static_cast<uint64_t>(d) + 1;
}

RESHARD_QD inline int64_t quant_div(int64_t x, uint64_t magic) {
  if (!magic)
    return x;
#if defined(__CUDA_ARCH__)
  return static_cast<int64_t>(__umul64hi(static_cast<uint64_t>(x), magic));
#else
  return static_cast<int64_t>(
      (static_cast<unsigned __int128>(static_cast<uint64_t>(x)) * magic) >> 64);
#endif
}

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
  int64_t rows, x0;     /* rows: the loops' iterations */
  uint64_t block_magic; /* / the block size along the last dim */
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
  r->block_magic = quant_magic(q.block[last]);
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

/*===-- The quad kernel: the fused pack's fast path -----------------------===*/
/* Laid out like a plain copy: a grid-stride loop over the box's quads, a
 * thread each. A quad is four neighbouring source elements of one row
 * from an element index that is a multiple of 4 (fewer at a run's ends):
 * one 8- or 16-byte load, one 4-byte store. Where the quad's row starts,
 * and its first block, are 32-bit divisions by constants (every index
 * they divide is below 2^31); the element type and the kind are template
 * arguments. (On an H200 a kernel of this shape packed a DeepSeek-V3
 * expert shard as fast as cudaMemcpy2D packs it at full precision, where
 * a thread block per piece of row, with row starts in shared memory, took
 * 2.4 times as long: BENCHMARKS.md section 5.) */

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
  int32_t kind, ndim;
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
  p->kind = q.kind;
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

/* Block `block`'s scale word (scale_word), read-only cached on a GPU. */
template <int Kind>
RESHARD_QD inline uint32_t quant_quad_scale(const void *scales, int64_t block) {
#if defined(__CUDA_ARCH__)
  if (Kind == kQuantMx)
    return __ldg(static_cast<const uint8_t *>(scales) + block);
  return __ldg(static_cast<const unsigned *>(scales) + block);
#else
  return scale_word(Kind, scales, block);
#endif
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
  uint32_t word = quant_quad_scale<Kind>(scales, a.first + c), bytes = 0;
  for (int k = 0; k < 4; ++k)
    if (k < a.n) {
      if (a.x + k == next) { /* the quad crosses into the next block */
        next += p.block;
        word = quant_quad_scale<Kind>(scales, a.first + ++c);
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

#if defined(__CUDACC__)
const int kQuantThreads = 128;
static_assert((kQuantThreads & (kQuantThreads - 1)) == 0,
              "the amax reduction halves the threads");

/* Grid-stride over the shard's blocks, one thread block at a time. */
static __global__ void __launch_bounds__(kQuantThreads)
    quantize_shard_kernel(QuantLaunch q, int64_t blocks, const void *in,
                          uint8_t *out, void *scales) {
  __shared__ uint32_t partial[kQuantThreads];
  for (int64_t b = blockIdx.x; b < blocks; b += gridDim.x) {
    partial[threadIdx.x] =
        quant_partial_amax(q, in, b, threadIdx.x, blockDim.x);
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s && partial[threadIdx.x + s] > partial[threadIdx.x])
        partial[threadIdx.x] = partial[threadIdx.x + s];
      __syncthreads();
    }
    uint32_t amax = partial[0];
    __syncthreads(); /* partial[0] is read before the next block writes */
    quant_block_write(q, in, out, scales, b, threadIdx.x, blockDim.x, amax);
  }
}

/* Grid-stride over a box's spans (the fused pack or a local copy). */
static __global__ void __launch_bounds__(kQuantThreads)
    quant_copy_kernel(QuantLaunch q, QuantCopyBox b, int64_t spans,
                      const void *in, const void *scales, uint8_t *out) {
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < spans;
       s += int64_t(gridDim.x) * blockDim.x)
    quant_span(q, in, scales, b, s, out);
}

/* Grid-stride over a box's quads (quant_quads_of). */
const int kQuantQuadThreads = 256;

template <int Input, int Kind>
static __global__ void __launch_bounds__(kQuantQuadThreads)
    quant_quads_kernel(QuantQuads p, bool wide, const void *in,
                       const void *scales, uint8_t *out) {
  /* Unsigned: quads < 2^31 and a stride below 2^31, so e never wraps. */
  uint32_t quads = static_cast<uint32_t>(p.quads);
  for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < quads;
       e += gridDim.x * blockDim.x)
    quant_quad<Input, Kind>(p, in, scales, e, wide, out);
}

typedef void (*QuantQuadsKernel)(QuantQuads, bool, const void *, const void *,
                                 uint8_t *);

/* The quad kernel for a source type and kind. */
inline QuantQuadsKernel quant_quads_kernel_for(int input, int kind) {
  static const QuantQuadsKernel kernels[3][2] = {
      {quant_quads_kernel<kQuantF32, kQuantBlock>,
       quant_quads_kernel<kQuantF32, kQuantMx>},
      {quant_quads_kernel<kQuantBF16, kQuantBlock>,
       quant_quads_kernel<kQuantBF16, kQuantMx>},
      {quant_quads_kernel<kQuantF16, kQuantBlock>,
       quant_quads_kernel<kQuantF16, kQuantMx>}};
  return kernels[input][kind == kQuantMx];
}

/* A grid-stride kernel's thread blocks for `threads` threads of
 * kQuantQuadThreads a block: enough to fill the device 16 times over,
 * fewer when there is less work. */
inline unsigned quant_stride_grid(int64_t threads) {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) !=
          cudaSuccess ||
      sms <= 0)
    sms = 132;
  int64_t blocks = (threads + kQuantQuadThreads - 1) / kQuantQuadThreads;
  return static_cast<unsigned>(blocks < 16 * sms ? blocks : 16 * sms);
}

/* A thread per segment (a row's elements of one block column): the E8M0
 * byte of an MX block (a segment is a whole MX block), or the amax bits
 * by atomicMax into the zeroed fp32 scales (quant_scale_kernel converts
 * them). */
static __global__ void quant_amax_kernel(QuantLaunch q, int64_t segments,
                                         const void *in, void *scales) {
  int64_t cols = q.nblocks[q.ndim - 1];
  for (int64_t s = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < segments;
       s += int64_t(gridDim.x) * blockDim.x) {
    int64_t line = quant_udiv(s, cols), block = 0;
    uint32_t m = quant_segment_amax(q, in, line, s - line * cols, &block);
    if (q.kind == kQuantMx)
      static_cast<uint8_t *>(scales)[block] =
          static_cast<uint8_t>(mx_exponent(bits_float(m)) + 127);
    else if (m)
      atomicMax(static_cast<unsigned *>(scales) + block, m);
  }
}

/* The blocks' amax bits to their fp32 scales, in place. */
static __global__ void quant_scale_kernel(int64_t blocks, void *scales) {
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks;
       b += int64_t(gridDim.x) * blockDim.x) {
    uint32_t *at = static_cast<uint32_t *>(scales) + b;
    *at = float_bits(block_scale(bits_float(*at)));
  }
}

inline unsigned quant_grid(int64_t blocks) {
  return blocks < (int64_t(1) << 20) ? static_cast<unsigned>(blocks) : 1u << 20;
}

/* Enqueues one box of the fused pack on `stream`. */
inline cudaError_t launch_quant_copy(const QuantLaunch &q,
                                     const QuantCopyBox &b, const void *in,
                                     const void *scales, uint8_t *out,
                                     cudaStream_t stream) {
  if (b.run <= 0)
    return cudaSuccess;
  QuantQuads p;
  /* Where the last dim has several runs the span kernel runs (it was the
   * faster there on an H200, BENCHMARKS.md section 5). */
  if (quant_quads_of(q, b, &p)) {
    if (p.quads <= 0)
      return cudaSuccess;
    bool wide =
        reinterpret_cast<uintptr_t>(in) % (4 * quant_input_bytes(q.input)) == 0;
    quant_quads_kernel_for(
        q.input,
        q.kind)<<<quant_stride_grid(p.quads), kQuantQuadThreads, 0, stream>>>(
        p, wide, in, scales, out);
    return cudaGetLastError();
  }
  int64_t spans = quant_span_count(b);
  if (spans == 0)
    return cudaSuccess;
  quant_copy_kernel<<<quant_grid((spans + kQuantThreads - 1) / kQuantThreads),
                      kQuantThreads, 0, stream>>>(q, b, spans, in, scales, out);
  return cudaGetLastError();
}

/* Enqueues the quantization of one shard on `stream`: its scales, a
 * thread per segment, then (a non-null `out`) its payload as one box of
 * rows (launch_quant_copy). Rows of 2^31 elements or more: the general
 * kernel. */
inline cudaError_t launch_quantize(const QuantLaunch &q, const void *in,
                                   uint8_t *out, void *scales,
                                   cudaStream_t stream) {
  int64_t blocks = quant_launch_blocks(q);
  if (blocks == 0)
    return cudaSuccess;
  QuantRows r;
  if (!quant_whole_rows(q, &r)) {
    quantize_shard_kernel<<<quant_grid(blocks), kQuantThreads, 0, stream>>>(
        q, blocks, in, out, scales);
    return cudaGetLastError();
  }
  cudaError_t e = cudaSuccess;
  if (q.kind != kQuantMx &&
      (e = cudaMemsetAsync(scales, 0, static_cast<size_t>(blocks) * 4,
                           stream)) != cudaSuccess)
    return e;
  int64_t segments = quant_segment_count(q);
  quant_amax_kernel<<<quant_grid((segments + 255) / 256), 256, 0, stream>>>(
      q, segments, in, scales);
  if (q.kind != kQuantMx)
    quant_scale_kernel<<<quant_grid((blocks + 255) / 256), 256, 0, stream>>>(
        blocks, scales);
  if ((e = cudaGetLastError()) != cudaSuccess || !out)
    return e;
  return launch_quant_copy(q, r.box, in, scales, out, stream);
}
#endif

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_QUANTIZEKERNELS_H */
