// Calls a generated MPI plan the wrong way on purpose, one fault per mode:
//   bad-rank         rank 1 passes a rank outside the plan
//   null             rank 1 passes a null source shard
//   short-workspace  rank 1 passes a workspace one byte short
//   stall            rank 1 never calls the plan (a dead or stalled peer)
//   late             rank 1 calls it 3 s late; nobody aborts the job
//   late-step        rank 1 stalls 3 s after the agreement (a test hook)
//   misaligned       rank 1 passes its first source shard one byte off
//   odd-workspace    rank 1 passes its workspace one byte off
//   verify-one       rank 1 alone passes RESHARD_RUN_VERIFY (_run_flags)
//   verify-all       every rank passes RESHARD_RUN_VERIFY
//   bad-flags        rank 1 passes a flag no plan knows
//   alias-src-dst    rank 1 passes its source shard as its destination
//   alias-ws-dst     rank 1 passes its destination shard as its workspace
//   bad-timeout      rank 1 sets RESHARD_TIMEOUT_SECONDS=2x
//   timeout-one      rank 1 alone sets RESHARD_TIMEOUT_SECONDS=30
//   bad-direct-min   rank 1 sets RESHARD_MPI_DIRECT_MIN=64k
//   direct-min-one   rank 1 alone sets RESHARD_MPI_DIRECT_MIN=1
//   before-init      every rank calls the plan before MPI_Init
//   after-finalize   every rank calls the plan after MPI_Finalize
//   ok               everyone calls it correctly
// Every rank prints its return code and message; no rank may crash or hang.
#include "plan.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

/* A call outside MPI_Init .. MPI_Finalize: an error, not an abort. */
static void call_outside_mpi(const char *when) {
  char err[512] = "";
  int rc = reshard_plan_run(0, nullptr, nullptr, MPI_COMM_WORLD, nullptr,
                            nullptr, 0, err, sizeof(err));
  std::printf("%s: rc %d: %s\n", when, rc, err);
  std::fflush(stdout);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "ok";
  if (!std::strcmp(mode, "before-init"))
    call_outside_mpi("before MPI_Init");
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int tensors = reshard_plan_num_tensors();
  std::vector<std::vector<char>> src(tensors), dst(tensors);
  std::vector<void *> srcp(tensors), dstp(tensors);
  for (int t = 0; t < tensors; ++t) {
    long long s = reshard_plan_src_bytes(rank, t),
              d = reshard_plan_dst_bytes(rank, t);
    src[t].assign(s > 0 ? s + 16 : 0, 1); // room to misalign
    dst[t].assign(d > 0 ? d : 0, 0);
    srcp[t] = src[t].empty() ? nullptr : src[t].data();
    dstp[t] = dst[t].empty() ? nullptr : dst[t].data();
  }
  size_t ws = reshard_plan_workspace_bytes(rank);
  std::vector<char> workspace(ws + 1);
  int call_rank = rank;
  bool faulty = rank == 1;
  if (faulty && !std::strcmp(mode, "bad-rank"))
    call_rank = 1000;
  if (faulty && !std::strcmp(mode, "null"))
    for (int t = 0; t < tensors; ++t)
      if (!src[t].empty()) {
        srcp[t] = nullptr;
        break;
      }
  if (faulty && !std::strcmp(mode, "misaligned"))
    for (int t = 0; t < tensors; ++t)
      if (!src[t].empty()) {
        srcp[t] = src[t].data() + 1;
        break;
      }
  if (faulty && !std::strcmp(mode, "short-workspace"))
    ws = ws ? ws - 1 : 0;
  if (faulty && !std::strcmp(mode, "alias-src-dst"))
    for (int t = 0; t < tensors; ++t)
      if (!src[t].empty() && !dst[t].empty()) {
        dstp[t] = srcp[t];
        break;
      }
  if (faulty && !std::strcmp(mode, "bad-timeout"))
    setenv("RESHARD_TIMEOUT_SECONDS", "2x", 1);
  if (faulty && !std::strcmp(mode, "timeout-one"))
    setenv("RESHARD_TIMEOUT_SECONDS", "30", 1);
  if (faulty && !std::strcmp(mode, "bad-direct-min"))
    setenv("RESHARD_MPI_DIRECT_MIN", "64k", 1);
  if (faulty && !std::strcmp(mode, "direct-min-one"))
    setenv("RESHARD_MPI_DIRECT_MIN", "1", 1);
  std::vector<char> shifted(ws + 32);
  char *wsp = workspace.data();
  if (faulty && !std::strcmp(mode, "alias-ws-dst"))
    for (int t = 0; t < tensors; ++t)
      if (!dst[t].empty()) {
        wsp = dst[t].data() + dst[t].size() / 2;
        break;
      }
  if (faulty && !std::strcmp(mode, "odd-workspace"))
    wsp = shifted.data() + 1 +
          (16 - reinterpret_cast<uintptr_t>(shifted.data()) % 16) % 16;
  char err[512] = "";
  int rc = 0;
  if (faulty && !std::strcmp(mode, "late"))
    std::this_thread::sleep_for(std::chrono::seconds(3));
  if (faulty && !std::strcmp(mode, "late-step"))
    setenv("RESHARD_TEST_PAUSE_AFTER_AGREEMENT", "3", 1);
  if (faulty && !std::strcmp(mode, "stall")) {
    std::this_thread::sleep_for(std::chrono::seconds(4));
    std::printf("rank %d: stalled\n", rank);
  } else {
    unsigned flags = 0;
    if (!std::strcmp(mode, "verify-all") ||
        (faulty && !std::strcmp(mode, "verify-one")))
      flags = RESHARD_RUN_VERIFY;
    if (faulty && !std::strcmp(mode, "bad-flags"))
      flags = 6;
    rc = reshard_plan_run_flags(call_rank, srcp.data(), dstp.data(),
                                MPI_COMM_WORLD, nullptr, wsp, ws, flags, err,
                                sizeof(err));
    std::printf("rank %d: rc %d: %s\n", rank, rc, err);
  }
  std::fflush(stdout);
  if (!std::strcmp(mode, "stall")) // the plan's requests may be pending
    MPI_Abort(MPI_COMM_WORLD, 0);
  MPI_Finalize();
  if (!std::strcmp(mode, "after-finalize"))
    call_outside_mpi("after MPI_Finalize");
  return 0;
}
