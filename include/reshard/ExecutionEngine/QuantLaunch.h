/*===- QuantLaunch.h - a shard as the GPU quantizer sees it ------*- C++ -*-===*
 *
 * How the NCCL backend's quantizer describes a source shard by value
 * (QuantLaunch: per dim the runs of the shard in local order and the block
 * size; a block starts at each run) and a box of it to pack (QuantCopyBox),
 * and the general per-thread work over them: a thread block per FP8 block
 * (its amax, scale and bytes), and spans of a run for the fused pack. All
 * host-and-device, with the scalar functions of Quantize.h, so that the
 * unit tests run the same code on the host.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_QUANTLAUNCH_H
#define RESHARD_EXECUTIONENGINE_QUANTLAUNCH_H

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
    /* A block past the dim's end is the dim: the same blocks, and every
     * sum of a block and an index below 2^63. */
    q->block[d] = blocks[d] < shape[d] ? blocks[d]
                  : shape[d] > 0       ? shape[d]
                                       : 1;
    int64_t n = *runs++;
    if (n > kQuantMaxRuns)
      return false;
    q->nruns[d] = n;
    q->nblocks[d] = 0;
    for (int64_t r = 0; r < n; ++r) {
      int64_t len = *runs++;
      q->run[d][r] = len;
      q->nblocks[d] += len / q->block[d] + (len % q->block[d] != 0);
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
    scale = quant_block_scale(q.kind, amax);
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

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_QUANTLAUNCH_H */
