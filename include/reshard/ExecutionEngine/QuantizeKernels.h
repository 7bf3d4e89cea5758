/*===- QuantizeKernels.h - FP8 quantization of shards on a GPU --*- C++ -*-===*
 *
 * The NCCL backend's quantizer: one CUDA thread block per quantization
 * block of a source shard computes the block's amax (a shared-memory
 * reduction), its scale, and every element's e4m3 byte, with the scalar
 * functions of Quantize.h that the host loops use. The shard's blocks are
 * described compactly (per dim: the runs of the shard in local order and
 * the block size; a block starts at each run), as the plan tables state
 * them. The per-block work is split into two host-and-device functions,
 * each over a thread's share of the block's elements, so that the unit
 * tests run the same code on the host with the reduction emulated.
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
 * block size and an element's block is a multiplication: each thread
 * block takes a unit, a piece of a row or several short rows, and
 * computes where its rows start once; its threads take groups of
 * elements that follow each other, so that they read and write
 * neighbouring bytes in wide accesses. (Its code also walks several runs;
 * the span kernel below was faster there.) */

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

/* Row `i` of `r`: where its run starts in the source (element) and the
 * destination (byte), and the first block of its shard row. */
RESHARD_QD inline void quant_row_at(const QuantLaunch &q, const QuantRows &r,
                                    int64_t i, int64_t *from, int64_t *to,
                                    int64_t *first_block) {
  const QuantCopyBox &b = r.box;
  int64_t f = b.from, t = b.to;
  for (int64_t l = b.n - 1; l >= 0; --l) {
    int64_t count = b.loops[3 * l], up = quant_udiv(i, count);
    f += (i - up * count) * b.loops[3 * l + 1];
    t += (i - up * count) * b.loops[3 * l + 2];
    i = up;
  }
  *from = f;
  *to = t;
  *first_block = quant_row_first_block(q, quant_udiv(f, q.shape[q.ndim - 1]));
}

/* Loads and stores of 16 bytes (a group: 8 16-bit or 4 fp32 elements)
 * where the addresses allow, since a GPU moves bytes at its bandwidth only
 * in wide accesses; elsewhere, and on the host, one element at a time. */
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

/* Source elements [lo, hi) of one row, at most one group, into `v`;
 * `full` when they are the whole group at a 16-byte address. */
RESHARD_QD inline void quant_group_load(const QuantLaunch &q, const void *in,
                                        int64_t lo, int64_t hi, bool full,
                                        float *v) {
#if defined(__CUDA_ARCH__)
  if (full)
    return quant_load16(in, lo, q.input, v);
#else
  (void)full;
#endif
  for (int i = 0; i < 8; ++i)
    if (i < hi - lo)
      v[i] = load_input(in, lo + i, q.input);
}

/* quant_group_load's elements quantized into `out`, given their row's
 * quant_row_at (from, to, first). */
RESHARD_QD inline void
quant_group_store(const QuantLaunch &q, const QuantRows &r, const void *scales,
                  int64_t from, int64_t to, int64_t first, int64_t lo,
                  int64_t hi, bool full, const float *v, uint8_t *out) {
  int n = static_cast<int>(hi - lo);
  uint8_t bytes[8];
  for (int i = 0; i < 8; ++i)
    if (i < n) {
      int64_t x = r.x0 + lo + i - from; /* along the last dim */
      int64_t block =
          first + (quant_last_one_run(q) ? quant_div(x, r.block_magic)
                                         : quant_dim_block(q, q.ndim - 1, x));
      bytes[i] = quantize_word(q.kind, v[i], scale_word(q.kind, scales, block));
    }
  uint8_t *at = out + to + (lo - from);
#if defined(__CUDA_ARCH__)
  if (full && reinterpret_cast<uintptr_t>(at) % n == 0) {
    uint32_t lo4 =
        bytes[0] | bytes[1] << 8 | bytes[2] << 16 | uint32_t(bytes[3]) << 24;
    if (n == 4) {
      *reinterpret_cast<uint32_t *>(at) = lo4;
    } else {
      uint32_t hi4 =
          bytes[4] | bytes[5] << 8 | bytes[6] << 16 | uint32_t(bytes[7]) << 24;
      *reinterpret_cast<uint2 *>(at) = make_uint2(lo4, hi4);
    }
    return;
  }
#else
  (void)full;
#endif
  for (int i = 0; i < 8; ++i)
    if (i < n)
      at[i] = bytes[i];
}

/* How the row kernel cuts `r` into units: each thread block takes pieces
 * of up to kQuantRowPiece elements of one row, or `per_block` whole rows
 * when they are short; kQuantRowThreads groups at a time. */
const int kQuantRowThreads = 256;
const int64_t kQuantRowChunk = 2048;
const int64_t kQuantRowPiece = 8 * kQuantRowChunk;

struct QuantRowCut {
  int64_t per_block, pieces, works;
};

inline QuantRowCut quant_row_cut(const QuantRows &r) {
  QuantRowCut c;
  int64_t run = r.box.run;
  c.per_block = run >= kQuantRowChunk ? 1 : kQuantRowChunk / run;
  if (c.per_block > kQuantRowThreads)
    c.per_block = kQuantRowThreads;
  c.pieces = (run + kQuantRowPiece - 1) / kQuantRowPiece;
  c.works = c.per_block > 1 ? (r.rows + c.per_block - 1) / c.per_block
                            : r.rows * c.pieces;
  return c;
}

/* Unit `w`: its first row, how many rows, and the piece [p0, p0 + span)
 * of their runs. */
RESHARD_QD inline void quant_row_unit(const QuantRows &r, const QuantRowCut &c,
                                      int64_t w, int64_t *row, int64_t *rows,
                                      int64_t *p0, int64_t *span) {
  *p0 = 0;
  *span = r.box.run;
  *rows = 1;
  if (c.per_block > 1) {
    *row = w * c.per_block;
    *rows = r.rows - *row < c.per_block ? r.rows - *row : c.per_block;
  } else {
    *row = quant_udiv(w, c.pieces);
    *p0 = (w - *row * c.pieces) * kQuantRowPiece;
    *span = r.box.run - *p0 < kQuantRowPiece ? r.box.run - *p0 : kQuantRowPiece;
  }
}

/* The groups of a unit's row: a piece of `span` elements starting at any
 * element meets at most this many groups of `g` (a power of two; 1: one
 * element each, where the source is not at a 16-byte address). */
RESHARD_QD inline int64_t quant_row_groups(int64_t span, int g) {
  return (span + 2 * (g - 1)) / g;
}

/* Group j of a unit's row whose piece is source elements [a, a + span):
 * its elements [lo, hi) (empty past the piece's end), and whether they
 * are the whole group. */
RESHARD_QD inline void quant_row_group_at(int64_t a, int64_t span, int g,
                                          int64_t j, int64_t *lo, int64_t *hi,
                                          bool *full) {
  int64_t start = (a & ~int64_t(g - 1)) + j * g, end = a + span;
  *lo = start > a ? start : a;
  *hi = start + g < end ? start + g : end;
  *full = g > 1 && *lo == start && *hi == start + g;
}

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

/* A unit per thread block (quant_row_cut), a group per thread in turn:
 * neighbours read and write neighbouring 16 and 8 (or 4) bytes. `g` is a
 * group's elements, 1 where the source is not at a 16-byte address. */
static __global__ void __launch_bounds__(kQuantRowThreads)
    quant_rows_kernel(QuantLaunch q, QuantRows r, QuantRowCut c, int g,
                      const void *in, const void *scales, uint8_t *out) {
  __shared__ int64_t from[kQuantRowThreads], to[kQuantRowThreads],
      first[kQuantRowThreads];
  for (int64_t w = blockIdx.x; w < c.works; w += gridDim.x) {
    int64_t row, rows, p0, span;
    quant_row_unit(r, c, w, &row, &rows, &p0, &span);
    __syncthreads(); /* the previous unit's rows are no longer read */
    if (threadIdx.x < rows)
      quant_row_at(q, r, row + threadIdx.x, &from[threadIdx.x],
                   &to[threadIdx.x], &first[threadIdx.x]);
    __syncthreads();
    int64_t per_row = quant_row_groups(span, g);
    for (int64_t e = threadIdx.x; e < rows * per_row; e += kQuantRowThreads) {
      int64_t k = rows > 1 ? quant_udiv(e, per_row) : 0, lo, hi;
      bool full;
      quant_row_group_at(from[k] + p0, span, g, e - k * per_row, &lo, &hi,
                         &full);
      if (lo < hi) {
        float v[8];
        quant_group_load(q, in, lo, hi, full, v);
        quant_group_store(q, r, scales, from[k], to[k], first[k], lo, hi, full,
                          v, out);
      }
    }
  }
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
  QuantRows r;
  /* Where the last dim has several runs, the span kernel was faster on
   * an H200 (0.047 against 0.093 ms, BENCHMARKS.md section 5). */
  if (quant_rows_of(q, b, &r) && quant_last_one_run(q)) {
    if (r.rows <= 0)
      return cudaSuccess;
    QuantRowCut c = quant_row_cut(r);
    int g = reinterpret_cast<uintptr_t>(in) % 16 == 0
                ? quant_group_elements(q.input)
                : 1;
    quant_rows_kernel<<<quant_grid(c.works), kQuantRowThreads, 0, stream>>>(
        q, r, c, g, in, scales, out);
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
