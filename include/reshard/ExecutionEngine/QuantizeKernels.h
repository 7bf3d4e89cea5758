/*===- QuantizeKernels.h - FP8 quantization of shards on a GPU ---*- C++ -*-===*
 *
 * The NCCL backend's quantizer: the CUDA kernels and their launches, over
 * the per-thread work of QuantLaunch.h (a thread block per FP8 block;
 * spans of a run), QuantRows.h (the scales, a thread per segment) and
 * QuantGroups.h (the fused pack, a thread per group). The scalar functions
 * are Quantize.h's, so that kernels and host loops round alike. Three
 * shapes of work:
 *  - the scales: a thread per segment (one row's elements of one block
 *    column), then the blocks' scales from their amax;
 *  - the fused pack (and local copies, and a receiver's whole shard): a
 *    warp per span of groups (eight neighbouring elements of a row) where
 *    the last dim is one run, else a thread per span of a run;
 *  - the general kernel, a thread block per block, for rows of 2^31
 *    elements or more.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_QUANTIZEKERNELS_H
#define RESHARD_EXECUTIONENGINE_QUANTIZEKERNELS_H

#include "reshard/ExecutionEngine/QuantGroups.h"

namespace reshard {
namespace engine {

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

/* Grid-stride over a box's groups (quant_groups_of). */
const int kQuantGroupThreads = 256;

/* The fused pack's elements a thread: eight, one 16-byte load of a 16-bit
 * source, the walk's cost shared by twice the elements of four. */
const int kQuantGroupWidth = 8;

/* Six thread blocks an SM (1536 threads), so at most 40 registers a
 * thread: ptxas left alone takes up to 48 for some instantiations (four
 * blocks), and fits 40 without spilling. */
const int kQuantGroupBlocksPerSM = 6;

/* Each warp a span of neighbouring groups (quant_warp_span), each lane
 * every 32nd group of it (quant_lane). */
template <int Input, int Kind, int W>
static __global__ void __launch_bounds__(kQuantGroupThreads,
                                         kQuantGroupBlocksPerSM)
    quant_groups_kernel(QuantGroups p, bool wide, const void *in,
                        const void *scales, uint8_t *out) {
  static_assert(kQuantGroupThreads % kQuantWarp == 0, "whole warps a block");
  uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
  uint32_t begin, end;
  quant_warp_span(static_cast<uint32_t>(p.groups), thread / kQuantWarp,
                  gridDim.x * blockDim.x / kQuantWarp, &begin, &end);
  quant_lane<Input, Kind, W>(p, in, scales, begin + thread % kQuantWarp, end,
                             wide, out);
}

typedef void (*QuantGroupsKernel)(QuantGroups, bool, const void *, const void *,
                                  uint8_t *);

/* The group kernel of kQuantGroupWidth for a source type and kind. */
inline QuantGroupsKernel quant_groups_kernel_for(int input, int kind) {
  const int W = kQuantGroupWidth;
  static const QuantGroupsKernel kernels[3][2] = {
      {quant_groups_kernel<kQuantF32, kQuantBlock, W>,
       quant_groups_kernel<kQuantF32, kQuantMx, W>},
      {quant_groups_kernel<kQuantBF16, kQuantBlock, W>,
       quant_groups_kernel<kQuantBF16, kQuantMx, W>},
      {quant_groups_kernel<kQuantF16, kQuantBlock, W>,
       quant_groups_kernel<kQuantF16, kQuantMx, W>}};
  return kernels[input][kind == kQuantMx];
}

/* A grid-stride kernel's thread blocks for `threads` threads of
 * kQuantGroupThreads a block: enough to fill the device 16 times over,
 * fewer when there is less work. */
inline unsigned quant_stride_grid(int64_t threads) {
  int device = 0, sms = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) !=
          cudaSuccess ||
      sms <= 0)
    sms = 132;
  int64_t blocks = (threads + kQuantGroupThreads - 1) / kQuantGroupThreads;
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

/* The blocks' amax bits to their fp32 scales (of a block `kind`), in
 * place. */
static __global__ void quant_scale_kernel(int kind, int64_t blocks,
                                          void *scales) {
  for (int64_t b = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks;
       b += int64_t(gridDim.x) * blockDim.x) {
    uint32_t *at = static_cast<uint32_t *>(scales) + b;
    *at = float_bits(quant_block_scale(kind, bits_float(*at)));
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
  QuantGroups p;
  /* Where the last dim has several runs the span kernel runs (it was the
   * faster there on an H200, BENCHMARKS.md section 5). */
  if (quant_groups_of(q, b, kQuantGroupWidth, &p)) {
    if (p.groups <= 0)
      return cudaSuccess;
    bool wide = reinterpret_cast<uintptr_t>(in) %
                    (kQuantGroupWidth * quant_input_bytes(q.input)) ==
                0;
    quant_groups_kernel_for(
        q.input,
        q.kind)<<<quant_stride_grid(p.groups), kQuantGroupThreads, 0, stream>>>(
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
        q.kind, blocks, scales);
  if ((e = cudaGetLastError()) != cudaSuccess || !out)
    return e;
  return launch_quant_copy(q, r.box, in, scales, out, stream);
}
#endif

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_QUANTIZEKERNELS_H */
