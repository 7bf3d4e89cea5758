// GPU checks for the NCCL backend, for a machine with one NVIDIA GPU (run by
// scripts/gpu-check.sh; compiled, not run, by the suite):
//  1. the CUDA pack and unpack of the execution engine (cudaMemcpy2DAsync
//     of strided boxes, cut at random byte ranges as step quotas cut them)
//     against the host loops of Boxes.h on random boxes and on rows
//     further apart than the maximum pitch; a stream that messages the
//     rank itself in three steps (pack, ncclSend/ncclRecv, unpack);
//  2. a one-rank plan (examples/gpu/one-rank.mlir) through NCCL: source
//     shards from SRC, destination shards to DST, in the format of
//     reshard-run (which then verifies them);
//  3. the bandwidth of that plan against cudaMemcpy device to device of the
//     same bytes;
//  4. the FP8 quantize kernels (the shard's, its scales alone, the fused
//     pack; the group, span and general kernels) against the host loops,
//     and their times against a device copy of the input and the plain
//     pack of the same box at full precision; the GPU's e4m3 conversion
//     against the host's on all 2^32 fp32 inputs; the DeviceMover's fused
//     pack and copy against the HostMover's on random boxes and byte
//     ranges.
#include "plan.h"
#include "reshard/ExecutionEngine/NcclBackend.h"

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#define CHECK_CUDA(x)                                                          \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                   cudaGetErrorString(e));                                     \
      return 1;                                                                \
    }                                                                          \
  } while (0)

// A plan with nothing in it, for the movers' error messages.
static reshard::engine::Plan namedPlan(const char *name) {
  reshard::engine::Plan plan = {};
  plan.name = name;
  return plan;
}

// A random box of a row-major shard of `shape` with `eb`-byte elements, as
// a pack descriptor: the innermost dim is the run, every outer dim a loop.
static std::vector<int64_t>
randomBox(std::mt19937_64 &rng, const std::vector<int64_t> &shape, int64_t eb) {
  int64_t rank = shape.size(), s = eb, off = 0;
  std::vector<int64_t> sizes(rank), strides(rank);
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape[d];
  }
  for (int64_t d = 0; d < rank; ++d) {
    sizes[d] = 1 + static_cast<int64_t>(rng() % shape[d]);
    off += static_cast<int64_t>(rng() % (shape[d] - sizes[d] + 1)) * strides[d];
  }
  std::vector<int64_t> desc = {off, sizes[rank - 1] * eb, rank - 1};
  for (int64_t d = 0; d + 1 < rank; ++d) {
    desc.push_back(sizes[d]);
    desc.push_back(strides[d]);
  }
  return desc;
}

static int checkRandomBoxes(int cases) {
  std::mt19937_64 rng(7);
  auto below = [&](int64_t n) { return static_cast<int64_t>(rng() % n); };
  reshard::engine::Plan plan = namedPlan("random_boxes");
  char err[256] = "";
  reshard::engine::nccl::DeviceMover device(plan, 0, 0, err, sizeof(err));
  reshard::engine::HostMover host;
  int bad = 0;
  for (int c = 0; c < cases; ++c) {
    int rank = 1 + below(4);
    int64_t eb = int64_t(1) << below(4);
    std::vector<int64_t> shape(rank);
    int64_t total = eb;
    for (int d = 0; d < rank; ++d) {
      shape[d] = 1 + below(d == rank - 1 ? 300 : 24);
      total *= shape[d];
    }
    std::vector<int64_t> desc = randomBox(rng, shape, eb);
    // A byte range of the box, as a step's quota cuts it: partial runs and
    // rows at both ends.
    int64_t bytes = reshard::engine::box_bytes(desc.data());
    int64_t lo = below(bytes), hi = lo + 1 + below(bytes - lo);
    std::vector<uint8_t> src(total), packedHost(hi - lo), packedDev(hi - lo);
    for (uint8_t &b : src)
      b = static_cast<uint8_t>(rng());
    host.pack(desc.data(), src.data(), lo, hi, packedHost.data());
    uint8_t *dev = nullptr, *staging = nullptr;
    CHECK_CUDA(cudaMalloc(&dev, total));
    CHECK_CUDA(cudaMalloc(&staging, hi - lo));
    CHECK_CUDA(cudaMemcpy(dev, src.data(), total, cudaMemcpyHostToDevice));
    if (device.pack(desc.data(), dev, lo, hi, staging)) {
      std::fprintf(stderr, "pack: %s\n", err);
      return 1;
    }
    CHECK_CUDA(
        cudaMemcpy(packedDev.data(), staging, hi - lo, cudaMemcpyDeviceToHost));
    bad += packedDev != packedHost;
    // Unpack into a zeroed buffer and compare with the host loops.
    std::vector<uint8_t> unpackedHost(total, 0), unpackedDev(total);
    host.unpack(desc.data(), unpackedHost.data(), lo, hi, packedHost.data());
    CHECK_CUDA(cudaMemset(dev, 0, total));
    if (device.unpack(desc.data(), dev, lo, hi, staging)) {
      std::fprintf(stderr, "unpack: %s\n", err);
      return 1;
    }
    CHECK_CUDA(
        cudaMemcpy(unpackedDev.data(), dev, total, cudaMemcpyDeviceToHost));
    bad += unpackedDev != unpackedHost;
    CHECK_CUDA(cudaFree(dev));
    CHECK_CUDA(cudaFree(staging));
  }
  std::printf("random boxes and byte ranges: %d cases, %d wrong\n", cases, bad);
  return bad ? 1 : 0;
}

// Rows further apart than cudaDevAttrMaxPitch (2^31 - 1 on Hopper): a box
// of a tensor whose outer stride is over 2 GiB must still pack and unpack.
static int checkLargePitch() {
  const int64_t run = 4096, stride = (int64_t(1) << 31) + 4096, rows = 3;
  int maxPitch = 0;
  CHECK_CUDA(cudaDeviceGetAttribute(&maxPitch, cudaDevAttrMaxPitch, 0));
  uint8_t *big = nullptr, *staging = nullptr;
  CHECK_CUDA(cudaMalloc(&big, stride * (rows - 1) + run));
  CHECK_CUDA(cudaMalloc(&staging, run * rows));
  std::vector<uint8_t> want(run * rows), got(run * rows);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = static_cast<uint8_t>(i * 131 + 7);
  for (int64_t r = 0; r < rows; ++r)
    CHECK_CUDA(cudaMemcpy(big + r * stride, want.data() + r * run, run,
                          cudaMemcpyHostToDevice));
  const int64_t loops[2] = {rows, stride};
  CHECK_CUDA(reshard::engine::nccl::copy_runs(staging, big, run, loops, 1, 2, 1,
                                              0, 0));
  CHECK_CUDA(
      cudaMemcpy(got.data(), staging, got.size(), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(big));
  CHECK_CUDA(cudaFree(staging));
  std::printf("large pitch: stride %lld > max pitch %d: %s\n",
              static_cast<long long>(stride), maxPitch,
              got == want ? "ok" : "WRONG");
  return got == want ? 0 : 1;
}

// The step path (pack, ncclSend/ncclRecv in a group, unpack) on one GPU: a
// hand-made one-rank plan whose only stream sends a strided box of tensor
// 0's source to the rank itself and unpacks it into another box of the
// destination, in three steps whose quota cuts rows in the middle.
// Generated plans never message themselves (local copies do that), but
// NCCL accepts a send to self, and it is the only way one GPU runs this
// path. Checked against the host loops of Boxes.h.
static int checkSelfMessage(ncclComm_t comm, cudaStream_t stream,
                            const char *label) {
  using namespace reshard::engine;
  const int64_t srcRows = 64, srcCols = 100, dstRows = 32, dstCols = 70;
  const int64_t run = 50, rows = 32, bytes = run * rows;
  const int64_t quota = bytes / 3 + 1; // 534, 534, 532: partial rows
  // The word pool: mesh [0], combo maps [0], shard bytes, descriptors,
  // members [0], the receive list [stream 0].
  static const int64_t words[] = {0, // 0: ranks, combos, members
                                  srcRows * srcCols, // 1: source shard bytes
                                  dstRows * dstCols, // 2: destination bytes
                                  8 * srcCols + 10,
                                  run,
                                  1,
                                  rows,
                                  srcCols, // 3: pack
                                  5,
                                  run,
                                  1,
                                  rows,
                                  dstCols, // 8: unpack
                                  8 * srcCols + 10,
                                  5,
                                  run,
                                  1,
                                  rows,
                                  srcCols,
                                  dstCols, // 13: copy
                                  0};      // 20: receive list
  static const char *const names[] = {"self"};
  static const int64_t tensorGroup[] = {0};
  static const Mesh meshes[] = {{1, 0}};
  // ndim 0: run() never reads the shapes (shard_shape() does).
  static const Class classes[] = {{0, 1, 1, 0, 1, 1, 1, 0, 1, 2, 0, 0, 0}};
  static const Piece pieces[] = {{0, 0, bytes, 3, 8, 13}};
  static const Group groups[] = {{0, 0, 0, 0, 1}};
  static const Item items[] = {{0, 0, 0, 1, 1}};
  // {phase, start, quota, bytes, num_items, first_item}
  static const StreamBody bodies[] = {{0, 0, quota, bytes, 1, 0}};
  static const StreamRow streams[] = {{0, 0, 0}};
  static const int32_t programOf[] = {0};
  static RankProgram program = {0, 0, 0, 0, 0, 1, 20, 1, 3};
  static Plan plan = {"self_message",
                      0x5e1f,
                      1,
                      1,
                      names,
                      0, // no dtypes
                      tensorGroup,
                      meshes,
                      1,
                      classes,
                      1,
                      pieces,
                      1,
                      groups,
                      1,
                      items,
                      1,
                      streams,
                      1,
                      bodies,
                      1,
                      &program,
                      1,
                      programOf,
                      words,
                      static_cast<int64_t>(sizeof(words) / sizeof(words[0])),
                      0,
                      0,
                      3,
                      0, // no quantized destinations
                      0,
                      0,
                      0,
                      0};
  program.workspace = rank_workspace(plan, program);
  std::vector<uint8_t> src(srcRows * srcCols), want(dstRows * dstCols, 0xA5),
      got(want.size()), packed(bytes);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<uint8_t>(i * 7 + 3);
  pack_range(words + 3, src.data(), 0, bytes, packed.data());
  unpack_range(words + 8, want.data(), 0, bytes, packed.data());
  uint8_t *srcDev = nullptr, *dstDev = nullptr, *ws = nullptr;
  CHECK_CUDA(cudaMalloc(&srcDev, src.size()));
  CHECK_CUDA(cudaMalloc(&dstDev, got.size()));
  CHECK_CUDA(cudaMalloc(&ws, program.workspace));
  CHECK_CUDA(
      cudaMemcpy(srcDev, src.data(), src.size(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dstDev, 0xA5, got.size()));
  void *srcPtr[1] = {srcDev}, *dstPtr[1] = {dstDev};
  char err[512] = "";
  int rc = nccl::run(plan, 0, srcPtr, dstPtr, comm, stream, ws,
                     program.workspace, err, sizeof(err));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(
      cudaMemcpy(got.data(), dstDev, got.size(), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(srcDev));
  CHECK_CUDA(cudaFree(dstDev));
  CHECK_CUDA(cudaFree(ws));
  std::printf("self message in 3 steps (pack, ncclSend/ncclRecv, unpack), "
              "%s: %s%s\n",
              label, rc ? "error: " : (got == want ? "ok" : "WRONG"),
              rc ? err : "");
  return rc || got != want ? 1 : 0;
}

// A nonblocking communicator (config.blocking = 0): NCCL calls may answer
// ncclInProgress, which the backend must settle before it enqueues more.
// The self message again, then the one-rank plan, whose destination shards
// are byte for byte its source shards (one rank holds whole tensors).
static int checkNonblocking(const std::vector<void *> &src,
                            const std::vector<void *> &dst, cudaStream_t stream,
                            void *ws, size_t wsBytes) {
  ncclUniqueId id;
  ncclComm_t comm;
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  ncclResult_t r = ncclGetUniqueId(&id);
  if (r == ncclSuccess)
    r = ncclCommInitRankConfig(&comm, 1, id, 0, &config);
  while (r == ncclInProgress)
    if (ncclCommGetAsyncError(comm, &r) != ncclSuccess)
      break;
  if (r != ncclSuccess) {
    std::fprintf(stderr, "nonblocking ncclCommInitRankConfig: %s\n",
                 ncclGetErrorString(r));
    return 1;
  }
  if (checkSelfMessage(comm, stream, "nonblocking communicator"))
    return 1;
  int tensors = reshard_plan_num_tensors();
  for (int t = 0; t < tensors; ++t)
    if (reshard_plan_dst_bytes(0, t) > 0)
      CHECK_CUDA(cudaMemset(dst[t], 0xA5, reshard_plan_dst_bytes(0, t)));
  char err[512] = "";
  int rc = reshard_plan_run(0, src.data(), dst.data(), comm, stream, ws,
                            wsBytes, err, sizeof(err));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  int wrong = 0;
  for (int t = 0; !rc && t < tensors; ++t) {
    int64_t s = reshard_plan_src_bytes(0, t), d = reshard_plan_dst_bytes(0, t);
    if (s != d || d <= 0)
      continue;
    std::vector<uint8_t> a(s), b(d);
    CHECK_CUDA(cudaMemcpy(a.data(), src[t], s, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(b.data(), dst[t], d, cudaMemcpyDeviceToHost));
    wrong += a != b;
  }
  std::printf("one-rank plan, nonblocking communicator: %s%s\n",
              rc ? "error: " : (wrong ? "WRONG" : "ok"), rc ? err : "");
  return rc || wrong ? 1 : 0;
}

// The fused pack (QuantizeKernels.h): the scales computed alone, then the
// columns [w/4, 3w/4) of every row packed as FP8 straight from the
// full-precision shard, against the host loops' bytes; and its time
// against the plain pack of the same box from an FP8 shard (the payload
// bytes the kernel wrote), as elements per second and as bytes moved
// (read + written) per second.
// The average time of `body` enqueued on the default stream, by events.
template <class Body> static float deviceMs(Body &&body, int reps = 20) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  body(); // warm up
  cudaEventRecord(start, 0);
  for (int i = 0; i < reps; ++i)
    body();
  cudaEventRecord(stop, 0);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / reps;
}

// The GPU's e4m3 conversion (cvt.rn.satfinite.e4m3x2.f32 from sm_89)
// against the bit-exact one of the host on every fp32 input, in both
// bytes of the pair (the fused pack converts two elements at a time).
static __global__ void e4m3Compare(uint32_t hi, unsigned long long *bad,
                                   uint32_t *first) {
  using namespace reshard::engine;
  uint32_t lo = blockIdx.x * blockDim.x + threadIdx.x;
  float v = bits_float(hi << 24 | lo);
  bool differs = e4m3_from_float(v) != e4m3_from_float_bits(v);
  if (!isnan(v)) { /* -v in the low byte, v in the high one */
    uint32_t pair = e4m3x2_from_numbers(-v, v);
    differs |= (pair & 0xffu) != e4m3_from_float_bits(-v) ||
               (pair >> 8) != e4m3_from_float_bits(v);
  }
  if (differs) {
    if (atomicAdd(bad, 1ull) == 0)
      *first = hi << 24 | lo;
  }
}

static int checkE4M3Everywhere() {
  unsigned long long *bad;
  uint32_t *first;
  CHECK_CUDA(cudaMallocManaged(&bad, sizeof(*bad)));
  CHECK_CUDA(cudaMallocManaged(&first, sizeof(*first)));
  *bad = 0;
  *first = 0;
  for (uint32_t hi = 0; hi < 256; ++hi)
    e4m3Compare<<<(1u << 24) / 256, 256>>>(hi, bad, first);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::printf("gpu-check: e4m3 conversion on all 2^32 fp32 inputs against "
              "the bits version: %llu differ%s",
              *bad, *bad ? "" : "\n");
  if (*bad)
    std::printf(" (first: input bits 0x%08x)\n", *first);
  int rc = *bad ? 1 : 0;
  cudaFree(bad);
  cudaFree(first);
  return rc;
}

static int64_t checkFusedPack(const std::vector<int64_t> &shape,
                              const reshard::engine::QuantLaunch &q, void *dIn,
                              void *dScales, void *dPayload, void *dOut,
                              void *dWide, const std::vector<uint8_t> &want,
                              const std::vector<uint8_t> &wantScales) {
  using namespace reshard::engine;
  CHECK_CUDA(cudaMemset(dScales, 0x55, wantScales.size()));
  CHECK_CUDA(launch_quantize(q, dIn, nullptr, dScales, 0));
  int64_t rows = 1, w = shape.back();
  for (size_t d = 0; d + 1 < shape.size(); ++d)
    rows *= shape[d];
  QuantCopyBox b;
  b.from = w / 4;
  b.to = 0;
  b.run = w * 3 / 4 - w / 4;
  b.n = 1;
  b.loops[0] = rows;
  b.loops[1] = w;
  b.loops[2] = b.run;
  int64_t n = rows * b.run;
  CHECK_CUDA(
      launch_quant_copy(q, b, dIn, dScales, static_cast<uint8_t *>(dOut), 0));
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<uint8_t> got(n), gotScales(wantScales.size());
  CHECK_CUDA(cudaMemcpy(got.data(), dOut, n, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(gotScales.data(), dScales, gotScales.size(),
                        cudaMemcpyDeviceToHost));
  int64_t bad = gotScales != wantScales;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < b.run; ++j)
      bad += got[r * b.run + j] != want[r * w + b.from + j];
  // The same box from a source one element off a 16-byte address (the
  // group kernel then loads an element at a time) into an odd destination
  // byte (no wide stores): the same bytes. dWide has room for both.
  int64_t in = quant_input_bytes(q.input);
  uint8_t *shifted = static_cast<uint8_t *>(dWide) + in;
  CHECK_CUDA(cudaMemcpy(shifted, dIn, rows * w * in, cudaMemcpyDeviceToDevice));
  uint8_t *odd = static_cast<uint8_t *>(dOut) + 1;
  CHECK_CUDA(launch_quant_copy(q, b, shifted, dScales, odd, 0));
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(got.data(), odd, n, cudaMemcpyDeviceToHost));
  int64_t badShifted = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < b.run; ++j)
      badShifted += got[r * b.run + j] != want[r * w + b.from + j];
  std::printf("gpu-check: fused pack from a source off 16 bytes into an odd "
              "destination byte: %lld wrong bytes\n",
              (long long)badShifted);
  bad += badShifted;
  // Bandwidth, counted as the bytes each kernel reads and writes: the
  // fused pack (full-precision elements in, FP8 out) against the plain
  // pack of the same box at full precision (what an unquantized plan
  // packs), and against the plain pack of the FP8 payload.
  float fused = deviceMs([&] {
    launch_quant_copy(q, b, dIn, dScales, static_cast<uint8_t *>(dOut), 0);
  });
  float wide = deviceMs([&] {
    cudaMemcpy2DAsync(dWide, b.run * in,
                      static_cast<const uint8_t *>(dIn) + b.from * in, w * in,
                      b.run * in, rows, cudaMemcpyDeviceToDevice, 0);
  });
  float narrow = deviceMs([&] {
    cudaMemcpy2DAsync(dOut, b.run, static_cast<uint8_t *>(dPayload) + b.from, w,
                      b.run, rows, cudaMemcpyDeviceToDevice, 0);
  });
  double ratio = (double(n) * (in + 1) / fused) / (double(n) * 2 * in / wide);
  std::printf("gpu-check: fused pack of %lld elements: %lld wrong bytes; "
              "%.3f ms (%.0f GB/s) vs plain pack of the %s box %.3f ms "
              "(%.0f GB/s), of its FP8 payload %.3f ms: bandwidth %.2f of the "
              "plain pack's (goal >= 0.8: %s), elements/s %.2f\n",
              (long long)n, (long long)bad, fused, n * (in + 1) / (fused * 1e6),
              in == 4 ? "fp32" : "16-bit", wide, n * 2.0 * in / (wide * 1e6),
              narrow, ratio, ratio >= 0.8 ? "met" : "NOT met", wide / fused);
  return bad;
}

// A quantized shard as the movers take it (QuantAreas.h's QuantizedSource
// without a plan): the device's pointers, or the host's for host().
struct ShardSource {
  int kind, input;
  int64_t ndim;
  const int64_t *shape, *blocks, *runs;
  const void *in;
  void *scales;
  reshard::engine::ShardBlocks sb;
  reshard::engine::QuantSource host() const {
    reshard::engine::QuantSource s = {kind, input, sb, in, scales};
    return s;
  }
};

// The NCCL backend's fused pack as a step runs it (DeviceMover's
// pack_quantized over a byte range of a box, cut into sub-boxes, and
// copy_quantized of a whole box) against the MPI backend's (HostMover) on
// random boxes of one quantized shard, the scales already computed.
static int checkQuantMovers(int cases, const ShardSource &dev,
                            const ShardSource &host) {
  std::mt19937_64 rng(11);
  auto below = [&](int64_t n) { return static_cast<int64_t>(rng() % n); };
  reshard::engine::Plan plan = namedPlan("quant_movers");
  char err[256] = "";
  reshard::engine::nccl::DeviceMover device(plan, 0, 0, err, sizeof(err));
  reshard::engine::HostMover mover;
  const std::vector<int64_t> shape(dev.shape, dev.shape + dev.ndim);
  int64_t bad = 0;
  for (int c = 0; c < cases; ++c) {
    // The payload has 1-byte elements: descriptors count elements. The
    // copy moves the same box into a packed destination.
    std::vector<int64_t> pack = randomBox(rng, shape, 1);
    std::vector<int64_t> copy = {pack[0], 0, pack[1], pack[2]};
    int64_t elems = reshard::engine::box_bytes(pack.data()), packed = elems;
    for (int64_t l = 0; l < pack[2]; ++l) {
      packed /= pack[3 + 2 * l];
      copy.push_back(pack[3 + 2 * l]);
      copy.push_back(pack[4 + 2 * l]);
      copy.push_back(packed);
    }
    int64_t lo = below(elems), hi = lo + 1 + below(elems - lo);
    std::vector<uint8_t> want(hi - lo), got(hi - lo), wantCopy(elems),
        gotCopy(elems);
    mover.pack_quantized(pack.data(), host, lo, hi, want.data());
    mover.copy_quantized(copy.data(), host, wantCopy.data());
    uint8_t *out = nullptr;
    CHECK_CUDA(cudaMalloc(&out, elems));
    if (device.pack_quantized(pack.data(), dev, lo, hi, out)) {
      std::fprintf(stderr, "pack_quantized: %s\n", err);
      return 1;
    }
    CHECK_CUDA(cudaMemcpy(got.data(), out, hi - lo, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemset(out, 0xA5, elems));
    if (device.copy_quantized(copy.data(), dev, out)) {
      std::fprintf(stderr, "copy_quantized: %s\n", err);
      return 1;
    }
    CHECK_CUDA(cudaMemcpy(gotCopy.data(), out, elems, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(out));
    bad += (got != want) + (gotCopy != wantCopy);
  }
  std::printf("gpu-check: DeviceMover pack_quantized/copy_quantized against "
              "HostMover's on %d random boxes and byte ranges: %lld wrong\n",
              cases, static_cast<long long>(bad));
  return bad ? 1 : 0;
}

// The FP8 quantize kernel (QuantizeKernels.h) against the host loops
// (Quantize.h, themselves bit-exact against the reference) on shards with
// several runs per dim, short last blocks, block scaling and MX, bf16 and
// fp32 inputs with zeros, subnormals, infinities and NaN; and its bandwidth
// against a device-to-device copy of the same payload bytes.
static int checkQuantize() {
  using namespace reshard::engine;
  struct Case {
    int kind, input;
    std::vector<int64_t> blocks, runs, shape;
  };
  std::vector<Case> cases = {
      {kQuantBlock,
       kQuantBF16,
       {128, 128},
       {1, 7168, 2, 1024, 1000},
       {7168, 2024}},
      {kQuantBlock, kQuantF32, {4, 8}, {3, 8, 4, 3, 1, 37}, {15, 37}},
      {kQuantMx, kQuantBF16, {1, 32}, {1, 4096, 2, 2048, 77}, {4096, 2125}},
      {kQuantMx, kQuantF32, {1, 1, 32}, {1, 3, 1, 5, 1, 100}, {3, 5, 100}},
      // Several runs on a leading dim, one on the last (the group kernel's
      // run tables): vLLM's merged gate_up (bf16), a 3-D fp16 shard.
      {kQuantBlock,
       kQuantBF16,
       {128, 128},
       {2, 2048, 2048, 1, 7168},
       {4096, 7168}},
      {kQuantBlock,
       kQuantF16,
       {1, 128, 128},
       {1, 4, 3, 384, 256, 200, 1, 1024},
       {4, 840, 1024}},
      // Power-of-two (ue8m0) block scales: DeepSeek-V3.1's gate_up, and
      // fp32 with short blocks.
      {kQuantBlockUe8m0,
       kQuantBF16,
       {128, 128},
       {2, 2048, 2048, 1, 7168},
       {4096, 7168}},
      {kQuantBlockUe8m0, kQuantF32, {4, 8}, {3, 8, 4, 3, 1, 37}, {15, 37}},
      // One run per dim (the group kernel), at the sizes of DeepSeek-V3's
      // and Qwen3's weights: the figures of the goal.
      {kQuantBlock, kQuantBF16, {128, 128}, {1, 7168, 1, 18432}, {7168, 18432}},
      {kQuantMx, kQuantBF16, {1, 32}, {1, 4096, 1, 12288}, {4096, 12288}},
      {kQuantBlock, kQuantF32, {128, 128}, {1, 4096, 1, 4096}, {4096, 4096}},
  };
  std::mt19937_64 rng(7);
  for (const Case &c : cases) {
    int64_t n = 1;
    for (int64_t d : c.shape)
      n *= d;
    size_t eb = quant_input_bytes(c.input);
    std::vector<uint8_t> in(n * eb);
    for (int64_t i = 0; i < n; ++i) {
      float v = std::ldexp(float(int64_t(rng() % 2001) - 1000) / 1000.0f,
                           int(rng() % 40) - 20);
      uint64_t k = rng() % 100;
      uint32_t u;
      std::memcpy(&u, &v, 4);
      uint32_t sign = rng() % 2 ? 0x80000000u : 0u; // a NaN keeps its sign
      if (k == 0)
        u = sign | 0x7f800000u; // Inf
      else if (k == 1)
        u = sign | 0x7fc00000u; // NaN
      else if (k == 2)
        u = 0x00000001u << (eb == 2 ? 16 : 0); // a subnormal
      if (eb == 4)
        std::memcpy(&in[4 * i], &u, 4);
      else {
        uint16_t h = uint16_t(u >> 16);
        std::memcpy(&in[2 * i], &h, 2);
      }
    }
    QuantLaunch q;
    if (!make_quant_launch(c.kind, c.input, c.shape.size(), c.shape.data(),
                           c.blocks.data(), c.runs.data(), &q)) {
      std::fprintf(stderr, "quantize: bad case\n");
      return 1;
    }
    // The host loops' cut points, from the same runs.
    std::vector<std::vector<int64_t>> cuts(c.shape.size());
    std::vector<const int64_t *> cutPtrs;
    std::vector<int64_t> nblocks;
    const int64_t *r = c.runs.data();
    for (size_t d = 0; d < c.shape.size(); ++d) {
      r = quant_cuts(r, c.blocks[d], cuts[d]);
      nblocks.push_back(cuts[d].size() - 1);
      cutPtrs.push_back(cuts[d].data());
    }
    int64_t blocks = quant_launch_blocks(q);
    size_t sb = c.kind == kQuantMx ? 1 : 4;
    std::vector<uint8_t> want(n), wantScales(blocks * sb);
    ShardBlocks shard = {int64_t(c.shape.size()), c.shape.data(),
                         nblocks.data(), cutPtrs.data()};
    quantize_shard_host(c.kind, c.input, shard, in.data(), want.data(),
                        wantScales.data());
    void *dIn, *dOut, *dScales, *dCopy, *dWide;
    CHECK_CUDA(cudaMalloc(&dIn, in.size()));
    CHECK_CUDA(cudaMalloc(&dOut, n));
    CHECK_CUDA(cudaMalloc(&dCopy, in.size()));      // the input's copy
    CHECK_CUDA(cudaMalloc(&dWide, in.size() + 16)); // a full-precision pack
    CHECK_CUDA(cudaMalloc(&dScales, wantScales.size()));
    CHECK_CUDA(cudaMemcpy(dIn, in.data(), in.size(), cudaMemcpyHostToDevice));
    CHECK_CUDA(
        launch_quantize(q, dIn, static_cast<uint8_t *>(dOut), dScales, 0));
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<uint8_t> got(n), gotScales(wantScales.size());
    CHECK_CUDA(cudaMemcpy(got.data(), dOut, n, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(gotScales.data(), dScales, gotScales.size(),
                          cudaMemcpyDeviceToHost));
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i)
      bad += got[i] != want[i];
    for (size_t i = 0; i < gotScales.size(); ++i)
      bad += gotScales[i] != wantScales[i];
    // Times: the whole shard (scales, then payload) and its scales alone
    // (what senders do before the first step), against a copy of the input.
    float tq = deviceMs([&] {
      launch_quantize(q, dIn, static_cast<uint8_t *>(dOut), dScales, 0);
    });
    float ts = deviceMs([&] { launch_quantize(q, dIn, nullptr, dScales, 0); });
    float tc = deviceMs([&] {
      cudaMemcpyAsync(dCopy, dIn, in.size(), cudaMemcpyDeviceToDevice, 0);
    });
    std::printf("gpu-check: quantize kind %d input %d shape %lld elements, "
                "%lld blocks: %lld wrong bytes; %.3f ms, scales alone %.3f "
                "ms, vs copy of the input %.3f ms (copy / quantize %.2f, "
                "copy / scales %.2f)\n",
                c.kind, c.input, (long long)n, (long long)blocks,
                (long long)bad, tq, ts, tc, tc / tq, tc / ts);
    if (!bad)
      bad = checkFusedPack(c.shape, q, dIn, dScales, dOut, dCopy, dWide, want,
                           wantScales);
    if (!bad) {
      ShardSource dev = {c.kind,
                         c.input,
                         int64_t(c.shape.size()),
                         c.shape.data(),
                         c.blocks.data(),
                         c.runs.data(),
                         dIn,
                         dScales,
                         shard};
      ShardSource host = dev;
      host.in = in.data();
      host.scales = wantScales.data();
      bad = checkQuantMovers(n < 10000000 ? 12 : 3, dev, host);
    }
    cudaFree(dIn);
    cudaFree(dOut);
    cudaFree(dCopy);
    cudaFree(dWide);
    cudaFree(dScales);
    if (bad)
      return 1;
  }
  return 0;
}

static std::string shardPath(const char *dir, const char *tensor) {
  return std::string(dir) + "/rank0." + tensor + ".bin";
}

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SRC DST\n", argv[0]);
    return 2;
  }
  // The conversion's verdict does not stop the checks after it: the
  // kernels' own comparisons then show what it changes.
  int e4m3Differs = checkE4M3Everywhere();
  if (checkRandomBoxes(300) || checkLargePitch() || checkQuantize())
    return 1;
  ncclComm_t comm;
  int device = 0;
  if (ncclCommInitAll(&comm, 1, &device) != ncclSuccess) {
    std::fprintf(stderr, "ncclCommInitAll failed\n");
    return 1;
  }
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  if (checkSelfMessage(comm, stream, "blocking communicator"))
    return 1;
  int tensors = reshard_plan_num_tensors();
  std::vector<void *> src(tensors, nullptr), dst(tensors, nullptr);
  int64_t totalBytes = 0;
  for (int t = 0; t < tensors; ++t) {
    int64_t s = reshard_plan_src_bytes(0, t), d = reshard_plan_dst_bytes(0, t);
    std::vector<uint8_t> host(s > 0 ? s : 0);
    // Scales of FP8 destinations have no source shard (and no file).
    FILE *f =
        s > 0
            ? std::fopen(
                  shardPath(argv[1], reshard_plan_tensor_name(t)).c_str(), "rb")
            : nullptr;
    if (s > 0 && (!f || std::fread(host.data(), 1, s, f) != size_t(s))) {
      std::fprintf(stderr, "cannot read the source shard of tensor %d\n", t);
      return 1;
    }
    if (f)
      std::fclose(f);
    if (s > 0) {
      CHECK_CUDA(cudaMalloc(&src[t], s));
      CHECK_CUDA(cudaMemcpy(src[t], host.data(), s, cudaMemcpyHostToDevice));
    }
    if (d > 0) {
      CHECK_CUDA(cudaMalloc(&dst[t], d));
      CHECK_CUDA(cudaMemset(dst[t], 0xA5, d)); // unwritten bytes must show
    }
    totalBytes += d > 0 ? d : 0;
  }
  size_t wsBytes = reshard_plan_workspace_bytes(0);
  void *ws = nullptr;
  if (wsBytes)
    CHECK_CUDA(cudaMalloc(&ws, wsBytes));
  char err[512] = "";
  int rc = reshard_plan_run(0, src.data(), dst.data(), comm, stream, ws,
                            wsBytes, err, sizeof(err));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  if (rc) {
    std::fprintf(stderr, "plan: error %d: %s\n", rc, err);
    return 1;
  }
  for (int t = 0; t < tensors; ++t) {
    int64_t d = reshard_plan_dst_bytes(0, t);
    if (d < 0)
      continue;
    std::vector<uint8_t> host(d);
    if (d > 0)
      CHECK_CUDA(cudaMemcpy(host.data(), dst[t], d, cudaMemcpyDeviceToHost));
    FILE *f = std::fopen(
        shardPath(argv[2], reshard_plan_tensor_name(t)).c_str(), "wb");
    if (!f || (d > 0 && std::fwrite(host.data(), 1, d, f) != size_t(d)))
      return 1;
    std::fclose(f);
  }
  // Bandwidth: the plan against one cudaMemcpy of the same bytes.
  const int reps = 10;
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  auto timeIt = [&](auto &&body) -> float {
    body();
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaEventRecord(start, stream));
    for (int i = 0; i < reps; ++i)
      body();
    CHECK_CUDA(cudaEventRecord(stop, stream));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    return ms / reps;
  };
  int timedRc = 0;
  float planMs = timeIt([&] {
    timedRc |= reshard_plan_run(0, src.data(), dst.data(), comm, stream, ws,
                                wsBytes, err, sizeof(err));
  });
  if (timedRc) {
    std::fprintf(stderr, "plan (timed): %s\n", err);
    return 1;
  }
  void *a = nullptr, *b = nullptr;
  CHECK_CUDA(cudaMalloc(&a, totalBytes));
  CHECK_CUDA(cudaMalloc(&b, totalBytes));
  float copyMs = timeIt([&] {
    cudaMemcpyAsync(b, a, totalBytes, cudaMemcpyDeviceToDevice, stream);
  });
  std::printf("one-rank plan: %lld bytes in %.3f ms (%.1f GB/s); cudaMemcpy "
              "D2D: %.3f ms (%.1f GB/s); plan / memcpy time: %.2f\n",
              static_cast<long long>(totalBytes), planMs,
              totalBytes / (planMs * 1e6), copyMs, totalBytes / (copyMs * 1e6),
              planMs / copyMs);
  ncclCommDestroy(comm);
  return checkNonblocking(src, dst, stream, ws, wsBytes) || e4m3Differs;
}
