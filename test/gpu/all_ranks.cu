// Every rank of a generated plan in one process, a thread per rank: each
// rank's program (Engine.h's run_program) with the NCCL backend's
// DeviceMover on its own CUDA stream, all on one GPU. One GPU cannot hold
// two ranks of an NCCL communicator, so a mailbox moves each step's
// messages from the sender's workspace to the receiver's instead, matched
// per pair of ranks in order as NCCL matches them. Everything else is the
// backend's own code: the fused pack (pack_quantized and copy_quantized
// from the full-precision shard), the scales and shadow kernels, transits
// and unpacks. Sources come from SRC/rank<R>.<tensor>.bin, destinations go
// to DST in reshard-run's format, for scripts/gpu-check.sh to compare
// (sha256) with reshard-run's bytes.
//
// The generated C++ is included (RESHARD_PLAN_FILE) to reach its tables.
// Compiled as plain C++ (a plan of the MPI backend), the same harness runs
// the ranks with the host mover: the suite checks the harness so, on
// machines with no GPU (all-ranks-host.test).
//   all_ranks SRC DST
#include RESHARD_PLAN_FILE

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace reshard::engine;

namespace {

#if defined(__CUDACC__)
const char *const kWhere = "one GPU, the NCCL backend's DeviceMover";
struct Lane { // a rank's stream and mover
  cudaStream_t stream = nullptr;
  char err[512] = "";
  nccl::DeviceMover mover;
  explicit Lane(int rank) : mover(kPlan, rank, nullptr, err, sizeof(err)) {
    cudaStreamCreate(&stream);
    mover.stream = stream;
  }
  ~Lane() { cudaStreamDestroy(stream); }
  bool sync() { return cudaStreamSynchronize(stream) == cudaSuccess; }
  bool take(uint8_t *to, const uint8_t *from, int64_t n) {
    return cudaMemcpyAsync(to, from, n, cudaMemcpyDeviceToDevice, stream) ==
               cudaSuccess &&
           sync();
  }
};
void *allocate(int64_t n) {
  void *p = nullptr;
  return cudaMalloc(&p, n > 0 ? n : 1) == cudaSuccess ? p : nullptr;
}
bool upload(void *to, const void *from, int64_t n) {
  return cudaMemcpy(to, from, n, cudaMemcpyHostToDevice) == cudaSuccess;
}
bool download(void *to, const void *from, int64_t n) {
  return cudaMemcpy(to, from, n, cudaMemcpyDeviceToHost) == cudaSuccess;
}
bool fill(void *p, int v, int64_t n) {
  return cudaMemset(p, v, n) == cudaSuccess;
}
void release(void *p) { cudaFree(p); }
bool settle() { return cudaDeviceSynchronize() == cudaSuccess; }
#else
const char *const kWhere = "the host loops of HostMover.h";
struct Lane {
  char err[512] = "";
  HostMover mover;
  explicit Lane(int) {}
  bool sync() { return true; }
  bool take(uint8_t *to, const uint8_t *from, int64_t n) {
    std::memcpy(to, from, n);
    return true;
  }
};
void *allocate(int64_t n) { return std::malloc(n > 0 ? n : 1); }
bool upload(void *to, const void *from, int64_t n) {
  std::memcpy(to, from, n);
  return true;
}
bool download(void *to, const void *from, int64_t n) {
  std::memcpy(to, from, n);
  return true;
}
bool fill(void *p, int v, int64_t n) {
  std::memset(p, v, n);
  return true;
}
void release(void *p) { std::free(p); }
bool settle() { return true; }
#endif

// One message on its way: the sender's staging bytes until the receiver
// has copied them out. Shared by the queue, the sender and the receiver,
// so that a rank leaving a step on an error frees nothing a peer holds.
struct Posting {
  const uint8_t *from;
  int64_t bytes, step;
  bool taken;
};

// The messages posted between each pair of ranks, oldest first; a failed
// rank wakes every waiter so that none waits forever.
struct Mailbox {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::pair<int64_t, int64_t>, std::deque<std::shared_ptr<Posting>>>
      queues;
  bool failed = false;

  void fail() {
    std::lock_guard<std::mutex> lock(mu);
    failLocked();
  }
  void failLocked() {
    failed = true;
    cv.notify_all();
  }
  // Waits for `ready` under the lock: false once a rank failed or after a
  // minute (a plan whose sends and receives do not match).
  template <class F> bool wait(std::unique_lock<std::mutex> &lock, F ready) {
    return cv.wait_for(lock, std::chrono::seconds(60), [&] {
      return failed || ready();
    }) && !failed;
  }
};

std::string shardPath(const std::string &dir, int64_t rank, int64_t t) {
  return dir + "/rank" + std::to_string(rank) + "." + kPlan.tensor_names[t] +
         ".bin";
}

// One rank: its program with a mailbox for a transport.
int runRank(int64_t rank, Mailbox &box, void *const *src, void *const *dst,
            uint8_t *ws, std::string &error) {
  const RankProgram *p = program(kPlan, static_cast<int>(rank));
  if (!p)
    return RESHARD_OK;
  Lane lane(static_cast<int>(rank));
  auto exchange = [&](int64_t step, const std::vector<Message> &sends,
                      const std::vector<Message> &recvs,
                      const std::vector<Message> &) -> int {
    if (!lane.sync()) { // the packs, before anyone reads the staging
      box.fail();
      return RESHARD_ERR_CUDA;
    }
    std::vector<std::shared_ptr<Posting>> posted;
    std::unique_lock<std::mutex> lock(box.mu);
    // Every failure stops the others' waits at once (the lock is held).
    auto failed = [&](int code, const std::string &why) {
      if (error.empty())
        error = "step " + std::to_string(step) + ": " + why;
      box.failLocked();
      return code;
    };
    for (const Message &m : sends) {
      posted.push_back(std::make_shared<Posting>(
          Posting{ws + m.staging, m.bytes, step, false}));
      box.queues[{rank, m.peer}].push_back(posted.back());
    }
    box.cv.notify_all();
    for (const Message &r : recvs) {
      std::deque<std::shared_ptr<Posting>> &q = box.queues[{r.peer, rank}];
      if (!box.wait(lock, [&] { return !q.empty(); }))
        return failed(RESHARD_ERR_TIMEOUT,
                      box.failed
                          ? "stopped: another rank failed"
                          : "nothing came from rank " + std::to_string(r.peer));
      std::shared_ptr<Posting> in = q.front();
      q.pop_front();
      if (in->bytes != r.bytes || in->step != step)
        return failed(RESHARD_ERR_COMM,
                      "rank " + std::to_string(r.peer) + " sent " +
                          std::to_string(in->bytes) + " bytes in its step " +
                          std::to_string(in->step) + ", the receive expects " +
                          std::to_string(r.bytes));
      lock.unlock(); // the copy runs outside the lock
      bool ok = lane.take(ws + r.staging, in->from, r.bytes);
      lock.lock();
      if (!ok)
        return failed(RESHARD_ERR_CUDA, "copying a message");
      in->taken = true;
      box.cv.notify_all();
    }
    // The staging is reused next step: wait until every receiver copied.
    if (!box.wait(lock, [&] {
          for (const std::shared_ptr<Posting> &s : posted)
            if (!s->taken)
              return false;
          return true;
        }))
      return failed(RESHARD_ERR_TIMEOUT, box.failed
                                             ? "stopped: another rank failed"
                                             : "a receiver took nothing");
    return RESHARD_OK;
  };
  int rc = run_program(kPlan, *p, src, dst, ws, lane.mover, exchange);
  if (rc == RESHARD_OK && !lane.sync())
    rc = RESHARD_ERR_CUDA;
  if (rc != RESHARD_OK && error.empty())
    error = lane.err;
  return rc;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s SRC DST\n", argv[0]);
    return 2;
  }
  const std::string srcDir = argv[1], dstDir = argv[2];
  const int64_t tensors = kPlan.num_tensors;
  // Every rank of a mesh has shards (reshard-run writes them all).
  std::set<int64_t> ranks;
  for (int64_t m = 0; m < kPlan.num_meshes; ++m)
    for (int64_t i = 0; i < kPlan.meshes[m].num_ranks; ++i)
      ranks.insert(kPlan.words[kPlan.meshes[m].ranks + i]);
  std::map<int64_t, std::vector<void *>> src, dst;
  std::map<int64_t, std::vector<int64_t>> dstBytes;
  std::map<int64_t, void *> ws;
  int64_t moved = 0;
  for (int64_t r : ranks) {
    std::vector<int64_t> s(tensors), d(tensors);
    shard_table(kPlan, r, true, s.data());
    shard_table(kPlan, r, false, d.data());
    src[r].assign(tensors, nullptr);
    dst[r].assign(tensors, nullptr);
    dstBytes[r] = d;
    for (int64_t t = 0; t < tensors; ++t) {
      if (s[t] >= 0) {
        std::vector<uint8_t> host(s[t]);
        FILE *f = std::fopen(shardPath(srcDir, r, t).c_str(), "rb");
        bool read = f && std::fread(host.data(), 1, s[t], f) == size_t(s[t]);
        if (f)
          std::fclose(f);
        if (!read || !(src[r][t] = allocate(s[t])) ||
            !upload(src[r][t], host.data(), s[t])) {
          std::fprintf(stderr, "all-ranks: cannot load %s\n",
                       shardPath(srcDir, r, t).c_str());
          return 1;
        }
      }
      if (d[t] >= 0) {
        // Unwritten bytes must show.
        if (!(dst[r][t] = allocate(d[t])) || !fill(dst[r][t], 0xA5, d[t]))
          return 1;
        moved += d[t];
      }
    }
    if (!(ws[r] = allocate(static_cast<int64_t>(workspace_bytes(kPlan, r)))))
      return 1;
  }
  // The fills and uploads, before any rank's stream reads them.
  if (!settle())
    return 1;
  Mailbox box;
  // Per thread, by its place in `order` (no map is touched concurrently).
  std::vector<int64_t> order(ranks.begin(), ranks.end());
  std::vector<int> rcs(order.size(), RESHARD_OK);
  std::vector<std::string> errors(order.size());
  std::vector<std::thread> threads;
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < order.size(); ++i) {
    int64_t r = order[i];
    threads.emplace_back([&, i, r, s = src.at(r).data(), d = dst.at(r).data(),
                          w = static_cast<uint8_t *>(ws.at(r))] {
      rcs[i] = runRank(r, box, s, d, w, errors[i]);
      if (rcs[i] != RESHARD_OK)
        box.fail();
    });
  }
  for (std::thread &t : threads)
    t.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  int failed = 0;
  for (size_t i = 0; i < order.size(); ++i)
    if (rcs[i] != RESHARD_OK) {
      std::fprintf(stderr, "all-ranks: rank %lld: error %d: %s\n",
                   static_cast<long long>(order[i]), rcs[i], errors[i].c_str());
      ++failed;
    }
  if (failed)
    return 1;
  for (int64_t r : ranks)
    for (int64_t t = 0; t < tensors; ++t) {
      int64_t d = dstBytes[r][t];
      if (d < 0)
        continue;
      std::vector<uint8_t> host(d);
      FILE *f = std::fopen(shardPath(dstDir, r, t).c_str(), "wb");
      if (!download(host.data(), dst[r][t], d) || !f ||
          std::fwrite(host.data(), 1, d, f) != size_t(d) || std::fclose(f)) {
        std::fprintf(stderr, "all-ranks: cannot write %s\n",
                     shardPath(dstDir, r, t).c_str());
        return 1;
      }
    }
  for (int64_t r : ranks) {
    for (int64_t t = 0; t < tensors; ++t) {
      release(src[r][t]);
      release(dst[r][t]);
    }
    release(ws[r]);
  }
  std::printf("all-ranks: plan %s, %zu ranks on %s: %lld destination bytes "
              "in %.3f s\n",
              kPlan.name, ranks.size(), kWhere, static_cast<long long>(moved),
              seconds);
  return 0;
}
