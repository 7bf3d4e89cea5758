// What the FP8 fused pack costs on a GPU, part by part: the library's group
// kernel (QuantizeKernels.h, launch_quant_copy) and its scales kernel
// against simpler kernels that each leave one thing out, on DeepSeek-V3's
// largest expert-sized shard (7168 x 18432 bf16, [128, 128] blocks, the
// middle half of its columns packed), random finite values without NaN,
// infinities or subnormals (real weights). Every exact variant is compared
// byte for byte with the library's result, and so are three launches of
// the library's group code that the library could switch to (groups of
// four; groups of eight in a plain grid-stride loop, the walk to a row
// done for every group, its form before warps took spans; two groups of
// four a thread, loads first). Run by scripts/gpu-check.sh
// after its checks (figures only; BENCHMARKS.md section 5).
#include "reshard/ExecutionEngine/QuantizeKernels.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace reshard::engine;

template <class Body> static float averageMs(Body &&body, int reps = 20) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  body(); // warm up
  cudaEventRecord(a, 0);
  for (int i = 0; i < reps; ++i)
    body();
  cudaEventRecord(b, 0);
  cudaEventSynchronize(b);
  float t = 0;
  cudaEventElapsedTime(&t, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t / reps;
}

// x / d for 0 <= x < 2^31 and 1 <= d < 2^31, as a multiplication by
// quant_magic(d) = ceil(2^64 / d) (0 for d = 1), a 64-bit multiply-high:
// the simple kernels' division (the library's is 32-bit, QuantGroups.h).
static uint64_t quant_magic(int64_t d) {
  return d == 1 ? 0 : UINT64_MAX / static_cast<uint64_t>(d) + 1;
}

__device__ inline int64_t quant_div(int64_t x, uint64_t magic) {
  return magic
             ? static_cast<int64_t>(__umul64hi(static_cast<uint64_t>(x), magic))
             : x;
}

// A 2-D box of `rows` rows of `run` elements from column `from` of a
// shard `w` wide, blocks of b0 x b1 (magic divisions as the library's).
struct Box2D {
  int64_t rows, run, from, w, cols;
  uint64_t byRun, byB0, byB1;
};

// One element a thread: 0 exact, 1 no quantization (the top byte), 2 a
// product instead of the division (not exact: the division's share).
template <int mode>
__global__ void perElement(Box2D p, const uint16_t *__restrict__ in,
                           const float *__restrict__ scales,
                           uint8_t *__restrict__ out) {
  int64_t n = p.rows * p.run;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = quant_div(i, p.byRun), c = i - r * p.run;
    float v = bf16_to_float(in[p.from + r * p.w + c]);
    if (mode == 1) {
      out[i] = uint8_t(float_bits(v) >> 24);
      continue;
    }
    int64_t x = p.from % p.w + c;
    float s = scales[quant_div(r, p.byB0) * p.cols + quant_div(x, p.byB1)];
    out[i] = mode == 0 ? quantize_scaled(v, s) : e4m3_from_float(v * s);
  }
}

// Where packed element e of a box comes from: its source element, its
// column, and the first block of its row.
struct From2D {
  int64_t src, x, rowBlocks;
};

__device__ inline From2D from2D(const Box2D &p, int64_t e) {
  int64_t r = quant_div(e, p.byRun), c = e - r * p.run;
  From2D f = {p.from + r * p.w + c, p.from % p.w + c,
              quant_div(r, p.byB0) * p.cols};
  return f;
}

// Two elements to e4m3 in one conversion (cvt...e4m3x2 takes a pair; the
// library converts one at a time), NaN kept with its sign as the library
// does: a at the low byte.
__device__ uint32_t quantizePair(float a, float sa, float b, float sb) {
  unsigned short pair;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;"
      : "=h"(pair)
      : "f"(div_rn(b, sb)), "f"(div_rn(a, sa)));
  uint8_t q;
  uint32_t r = pair;
  if (nan_e4m3(a, &q))
    r = (r & 0xff00u) | q;
  if (nan_e4m3(b, &q))
    r = (r & 0x00ffu) | uint32_t(q) << 8;
  return r;
}

// Four neighbouring elements a thread: 8-byte loads, 4-byte stores (the
// run and `from` multiples of 4); `paired`: two elements a conversion.
template <bool paired>
__global__ void fourWide(Box2D p, const uint16_t *__restrict__ in,
                         const float *__restrict__ scales,
                         uint8_t *__restrict__ out) {
  int64_t n4 = p.rows * p.run / 4;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n4;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t e = 4 * i;
    From2D f = from2D(p, e);
    uint2 w = *reinterpret_cast<const uint2 *>(in + f.src);
    float s[4], v[4] = {bf16_to_float(uint16_t(w.x)),
                        bf16_to_float(uint16_t(w.x >> 16)),
                        bf16_to_float(uint16_t(w.y)),
                        bf16_to_float(uint16_t(w.y >> 16))};
    for (int k = 0; k < 4; ++k)
      s[k] = scales[f.rowBlocks + quant_div(f.x + k, p.byB1)];
    uint32_t o = 0;
    if (paired)
      o = quantizePair(v[0], s[0], v[1], s[1]) |
          quantizePair(v[2], s[2], v[3], s[3]) << 16;
    else
      for (int k = 0; k < 4; ++k)
        o |= uint32_t(quantize_scaled(v[k], s[k])) << (8 * k);
    *reinterpret_cast<uint32_t *>(out + e) = o;
  }
}

// fourWide with eight elements a thread (16-byte loads, 8-byte stores):
// the walk's cost spread over twice the elements, twice the bytes in
// flight a thread (the run and `from` multiples of 8).
__global__ void eightWide(Box2D p, const uint16_t *__restrict__ in,
                          const float *__restrict__ scales,
                          uint8_t *__restrict__ out) {
  int64_t n8 = p.rows * p.run / 8;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n8;
       i += int64_t(gridDim.x) * blockDim.x) {
    int64_t e = 8 * i;
    From2D f = from2D(p, e);
    uint4 w = *reinterpret_cast<const uint4 *>(in + f.src);
    uint32_t words[4] = {w.x, w.y, w.z, w.w};
    uint32_t o[2] = {0, 0};
    for (int k = 0; k < 8; ++k) {
      float s = scales[f.rowBlocks + quant_div(f.x + k, p.byB1)];
      float v = bf16_to_float(uint16_t(words[k / 2] >> (16 * (k % 2))));
      o[k / 4] |= uint32_t(quantize_scaled(v, s)) << (8 * (k % 4));
    }
    *reinterpret_cast<uint2 *>(out + e) = make_uint2(o[0], o[1]);
  }
}

// The library's group code in a plain grid-stride loop, a group a thread,
// the walk to its row done for every group (the library's kernel before
// each warp took a span).
__global__ void groupStride(QuantGroups p, bool wide, const void *in,
                            const void *scales, uint8_t *out) {
  uint32_t groups = p.groups;
  for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < groups;
       e += gridDim.x * blockDim.x)
    quant_group<kQuantBF16, kQuantBlock, 8>(p, in, scales, e, wide, out);
}

// The library's group code, groups of four, two groups a thread, both
// loads issued before either is quantized: twice the bytes in flight a
// thread, what the library's loop would become if loads in flight set the
// pace.
__global__ void twoGroups(QuantGroups p, bool wide, const void *in,
                          const void *scales, uint8_t *out) {
  uint32_t groups = p.groups, stride = gridDim.x * blockDim.x;
  for (uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < groups;
       e += 2 * stride) {
    float v0[4], v1[4];
    QuantGroup a0 =
        quant_group_fetch<kQuantBF16, 4>(p, kQuantBlock, in, e, wide, v0);
    QuantGroup a1;
    a1.n = 0;
    if (e + stride < groups)
      a1 = quant_group_fetch<kQuantBF16, 4>(p, kQuantBlock, in, e + stride,
                                            wide, v1);
    if (a0.n > 0)
      quant_group_put<kQuantBlock, 4>(p, scales, a0, v0, out);
    if (a1.n > 0)
      quant_group_put<kQuantBlock, 4>(p, scales, a1, v1, out);
  }
}

int main() {
  const int64_t rows = 7168, w = 18432, n = rows * w, b = 128;
  std::vector<uint16_t> host(n);
  uint64_t state = 1;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    float v = std::ldexp(float(int64_t(state >> 40) % 2001 - 1000) / 1000.0f,
                         int((state >> 20) % 40) - 20);
    uint32_t u;
    std::memcpy(&u, &v, 4);
    host[i] = uint16_t(u >> 16);
  }
  uint16_t *in;
  float *scales;
  uint8_t *out, *wide;
  int64_t cols = w / b, blocks = rows / b * cols;
  if (cudaMalloc(&in, 2 * n) || cudaMalloc(&out, n) ||
      cudaMalloc(&wide, 2 * n) || cudaMalloc(&scales, 4 * blocks)) {
    std::fprintf(stderr, "fused-pack-variants: cudaMalloc failed\n");
    return 1;
  }
  cudaMemcpy(in, host.data(), 2 * n, cudaMemcpyHostToDevice);
  std::vector<int64_t> shape = {rows, w}, sizes = {b, b},
                       runs = {1, rows, 1, w};
  QuantLaunch q;
  make_quant_launch(kQuantBlock, kQuantBF16, 2, shape.data(), sizes.data(),
                    runs.data(), &q);
  float tScales =
      averageMs([&] { launch_quantize(q, in, nullptr, scales, 0); });
  float tCopy = averageMs(
      [&] { cudaMemcpyAsync(wide, in, 2 * n, cudaMemcpyDeviceToDevice, 0); });
  std::printf("fused-pack-variants: scales of %lld elements %.3f ms, copy of "
              "the input %.3f ms\n",
              (long long)n, tScales, tCopy);
  int64_t from = w / 4, run = w / 2, m = rows * run;
  QuantCopyBox box;
  box.from = from;
  box.to = 0;
  box.run = run;
  box.n = 1;
  box.loops[0] = rows;
  box.loops[1] = w;
  box.loops[2] = run;
  Box2D p = {rows,           run,           from, w, cols, quant_magic(run),
             quant_magic(b), quant_magic(b)};
  unsigned grid = 132 * 16;
  float tLibrary =
      averageMs([&] { launch_quant_copy(q, box, in, scales, out, 0); });
  std::vector<uint8_t> want(m), got(m);
  cudaMemcpy(want.data(), out, m, cudaMemcpyDeviceToHost);
  float tExact =
      averageMs([&] { perElement<0><<<grid, 256>>>(p, in, scales, out); });
  cudaMemcpy(got.data(), out, m, cudaMemcpyDeviceToHost);
  bool sameExact = got == want;
  float tTopByte =
      averageMs([&] { perElement<1><<<grid, 256>>>(p, in, scales, out); });
  float tProduct =
      averageMs([&] { perElement<2><<<grid, 256>>>(p, in, scales, out); });
  float tFour =
      averageMs([&] { fourWide<false><<<grid, 256>>>(p, in, scales, out); });
  cudaMemcpy(got.data(), out, m, cudaMemcpyDeviceToHost);
  bool sameFour = got == want;
  cudaMemset(out, 0x55, m);
  float tEight =
      averageMs([&] { eightWide<<<grid, 256>>>(p, in, scales, out); });
  cudaMemcpy(got.data(), out, m, cudaMemcpyDeviceToHost);
  bool sameEight = got == want;
  cudaMemset(out, 0x55, m);
  float tPaired =
      averageMs([&] { fourWide<true><<<grid, 256>>>(p, in, scales, out); });
  cudaMemcpy(got.data(), out, m, cudaMemcpyDeviceToHost);
  bool samePaired = got == want;
  // The library's group code: groups of four; groups of eight in a plain
  // grid-stride loop; two groups of four a thread.
  QuantGroups fours, eights;
  if (!quant_groups_of(q, box, 4, &fours) ||
      !quant_groups_of(q, box, 8, &eights)) {
    std::fprintf(stderr, "fused-pack-variants: the group kernel refuses\n");
    return 1;
  }
  cudaMemset(out, 0x55, m);
  float tFours = averageMs([&] {
    quant_groups_kernel<kQuantBF16, kQuantBlock, 4>
        <<<quant_stride_grid(fours.groups), kQuantGroupThreads>>>(
            fours, true, in, scales, out);
  });
  cudaMemcpy(got.data(), out, m, cudaMemcpyDeviceToHost);
  bool sameFours = got == want;
  cudaMemset(out, 0x55, m);
  float tStride = averageMs([&] {
    groupStride<<<quant_stride_grid(eights.groups), kQuantGroupThreads>>>(
        eights, true, in, scales, out);
  });
  cudaMemcpy(got.data(), out, m, cudaMemcpyDeviceToHost);
  bool sameStride = got == want;
  cudaMemset(out, 0x55, m);
  float tTwo = averageMs(
      [&] { twoGroups<<<grid, 256>>>(fours, true, in, scales, out); });
  cudaMemcpy(got.data(), out, m, cudaMemcpyDeviceToHost);
  bool sameTwo = got == want;
  float tPlain = averageMs([&] {
    cudaMemcpy2DAsync(wide, run * 2, in + from, w * 2, run * 2, rows,
                      cudaMemcpyDeviceToDevice, 0);
  });
  std::printf(
      "fused-pack-variants: %lld elements: library %.3f ms; one element a "
      "thread %.3f ms (%s), without quantizing %.3f ms, with a product for "
      "the division %.3f ms; four a thread %.3f ms (%s), eight a thread "
      "%.3f ms (%s), four with paired conversions %.3f ms (%s); the "
      "library's group kernel with groups of four %.3f ms (%s), in a "
      "grid-stride loop of groups of eight %.3f ms (%s), with two groups of "
      "four a "
      "thread %.3f ms (%s); plain pack of the bf16 box %.3f ms\n",
      (long long)m, tLibrary, tExact, sameExact ? "same bytes" : "DIFFERENT",
      tTopByte, tProduct, tFour, sameFour ? "same bytes" : "DIFFERENT", tEight,
      sameEight ? "same bytes" : "DIFFERENT", tPaired,
      samePaired ? "same bytes" : "DIFFERENT", tFours,
      sameFours ? "same bytes" : "DIFFERENT", tStride,
      sameStride ? "same bytes" : "DIFFERENT", tTwo,
      sameTwo ? "same bytes" : "DIFFERENT", tPlain);
  // The goal counts bytes read and written: 3 an element fused, 4 plain.
  std::printf("fused-pack-variants: library / plain pack time %.2f, "
              "bandwidth %.2f of the plain pack's (goal >= 0.8)\n",
              tLibrary / tPlain, 3.0 * tPlain / (4.0 * tLibrary));
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) {
    std::fprintf(stderr, "fused-pack-variants: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return sameExact && sameFour && sameEight && samePaired && sameFours &&
                 sameStride && sameTwo
             ? 0
             : 1;
}
