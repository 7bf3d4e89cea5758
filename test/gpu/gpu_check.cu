// GPU checks for the NCCL backend, for a machine with one NVIDIA GPU (run by
// scripts/gpu-check.sh; compiled, not run, by the suite):
//  1. the CUDA pack and unpack of the runtime (cudaMemcpy2DAsync of strided
//     boxes) against the host loops of Runtime.h on random boxes and on
//     rows further apart than the maximum pitch; a step that messages the
//     rank itself (pack, ncclSend/ncclRecv, unpack);
//  2. a one-rank plan (examples/gpu/one-rank.mlir) through NCCL: source
//     shards from SRC, destination shards to DST, in the format of
//     reshard-run (which then verifies them);
//  3. the bandwidth of that plan against cudaMemcpy device to device of the
//     same bytes.
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

static int checkRandomBoxes(int cases) {
  std::mt19937_64 rng(7);
  auto below = [&](int64_t n) { return static_cast<int64_t>(rng() % n); };
  int bad = 0;
  for (int c = 0; c < cases; ++c) {
    int rank = 1 + below(4);
    int64_t eb = int64_t(1) << below(4);
    std::vector<int64_t> shape(rank), offset(rank), sizes(rank);
    int64_t total = eb;
    for (int d = 0; d < rank; ++d) {
      shape[d] = 1 + below(d == rank - 1 ? 300 : 24);
      sizes[d] = 1 + below(shape[d]);
      offset[d] = below(shape[d] - sizes[d] + 1);
      total *= shape[d];
    }
    // Box descriptor: innermost dim is the run, every outer dim a loop.
    std::vector<int64_t> strides(rank);
    int64_t s = eb;
    for (int d = rank - 1; d >= 0; --d) {
      strides[d] = s;
      s *= shape[d];
    }
    std::vector<int64_t> desc = {0, 0, 0, sizes[rank - 1] * eb, rank - 1};
    for (int d = 0; d < rank; ++d)
      desc[2] += offset[d] * strides[d];
    for (int d = 0; d < rank - 1; ++d) {
      desc.push_back(sizes[d]);
      desc.push_back(strides[d]);
    }
    int64_t bytes = reshard::engine::box_bytes(desc.data());
    std::vector<uint8_t> host(total), packedHost(bytes), packedDev(bytes);
    for (uint8_t &b : host)
      b = static_cast<uint8_t>(rng());
    void *hostPtr[1] = {host.data()};
    reshard::engine::pack_box(desc.data(), hostPtr, hostPtr, packedHost.data());
    uint8_t *dev = nullptr, *staging = nullptr;
    CHECK_CUDA(cudaMalloc(&dev, total));
    CHECK_CUDA(cudaMalloc(&staging, bytes));
    CHECK_CUDA(cudaMemcpy(dev, host.data(), total, cudaMemcpyHostToDevice));
    CHECK_CUDA(reshard::engine::nccl::copy_runs(
        staging, dev + desc[2], desc[3], desc.data() + 5, desc[4], 2, 1, 0, 0));
    CHECK_CUDA(
        cudaMemcpy(packedDev.data(), staging, bytes, cudaMemcpyDeviceToHost));
    bad += packedDev != packedHost;
    // Unpack into a zeroed buffer and compare with the host loops.
    std::vector<uint8_t> unpackedHost(total, 0), unpackedDev(total);
    void *unpackPtr[1] = {unpackedHost.data()};
    reshard::engine::unpack_box(desc.data(), unpackPtr, packedHost.data());
    CHECK_CUDA(cudaMemset(dev, 0, total));
    CHECK_CUDA(reshard::engine::nccl::copy_runs(
        dev + desc[2], staging, desc[3], desc.data() + 5, desc[4], 2, 0, 1, 0));
    CHECK_CUDA(
        cudaMemcpy(unpackedDev.data(), dev, total, cudaMemcpyDeviceToHost));
    bad += unpackedDev != unpackedHost;
    CHECK_CUDA(cudaFree(dev));
    CHECK_CUDA(cudaFree(staging));
  }
  std::printf("random boxes: %d cases, %d wrong\n", cases, bad);
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
// hand-made one-rank plan whose only step sends a strided box of tensor 0's
// source to the rank itself and unpacks it into another box of the
// destination. Generated plans never message themselves (local copies do
// that), but NCCL accepts a send to self, and it is the only way one GPU
// runs this path. Checked against the host loops of Runtime.h.
static int checkSelfMessage(ncclComm_t comm, cudaStream_t stream,
                            const char *label) {
  const int64_t srcRows = 64, srcCols = 100, dstRows = 32, dstCols = 70;
  const int64_t run = 50, rows = 32, bytes = run * rows;
  static const int64_t steps[] = {
      0,       1,     1, // step 0: 1 send, 1 receive
      0,       bytes, 0,
      7, // send to 0, staging 0
      0,       0,     8 * srcCols + 10,
      run,     1,     rows,
      srcCols, 0,     bytes,
      bytes,   7, // receive from 0
      0,       1,     5,
      run,     1,     rows,
      dstCols};
  static const int64_t shards[] = {0, srcRows * srcCols, dstRows * dstCols};
  static const int32_t programOf[] = {0};
  static const char *const names[] = {"self"};
  static const reshard::engine::RankProgram program = {
      0,      2 * bytes,
      shards, 1,
      0,      0,
      steps,  static_cast<int64_t>(sizeof(steps) / sizeof(steps[0]))};
  static const reshard::engine::Plan plan = {
      "self_message", 0x5e1f, 1, 1, names, &program, 1, programOf, 1};
  std::vector<uint8_t> src(srcRows * srcCols), want(dstRows * dstCols, 0xA5),
      got(want.size()), packed(bytes);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = static_cast<uint8_t>(i * 7 + 3);
  void *srcHost[1] = {src.data()}, *dstHost[1] = {want.data()};
  reshard::engine::pack_box(steps + 7, srcHost, dstHost, packed.data());
  reshard::engine::unpack_box(steps + 18, dstHost, packed.data());
  uint8_t *srcDev = nullptr, *dstDev = nullptr, *ws = nullptr;
  CHECK_CUDA(cudaMalloc(&srcDev, src.size()));
  CHECK_CUDA(cudaMalloc(&dstDev, got.size()));
  CHECK_CUDA(cudaMalloc(&ws, 2 * bytes));
  CHECK_CUDA(
      cudaMemcpy(srcDev, src.data(), src.size(), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dstDev, 0xA5, got.size()));
  void *srcPtr[1] = {srcDev}, *dstPtr[1] = {dstDev};
  char err[512] = "";
  int rc = reshard::engine::nccl::run(plan, 0, srcPtr, dstPtr, comm, stream, ws,
                                      2 * bytes, err, sizeof(err));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(
      cudaMemcpy(got.data(), dstDev, got.size(), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaFree(srcDev));
  CHECK_CUDA(cudaFree(dstDev));
  CHECK_CUDA(cudaFree(ws));
  std::printf("self message (pack, ncclSend/ncclRecv, unpack), %s: %s%s\n",
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

static std::string shardPath(const char *dir, const char *tensor) {
  return std::string(dir) + "/rank0." + tensor + ".bin";
}

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SRC DST\n", argv[0]);
    return 2;
  }
  if (checkRandomBoxes(300) || checkLargePitch())
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
    FILE *f = std::fopen(
        shardPath(argv[1], reshard_plan_tensor_name(t)).c_str(), "rb");
    if (!f || (s > 0 && std::fread(host.data(), 1, s, f) != size_t(s))) {
      std::fprintf(stderr, "cannot read the source shard of tensor %d\n", t);
      return 1;
    }
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
  return checkNonblocking(src, dst, stream, ws, wsBytes);
}
