// A refit program built on a plan compiled by reshard_add_plan(): every
// rank loads its source shards, runs its part of the plan through the C
// ABI, and stores its destination shards. Shards are files
// DIR/rank<R>.<tensor>.bin, as reshard-run reads and writes them.
//
//   mpirun -n <ranks> refit --src SRC --dst DST
#include "refit_plan.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::string shardPath(const char *dir, int rank, int tensor) {
  return std::string(dir) + "/rank" + std::to_string(rank) + "." +
         refit_plan_tensor_name(tensor) + ".bin";
}

// An empty shard may have an empty file or none, as in reshard-run.
bool readShard(const std::string &path, std::vector<unsigned char> &buf) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return buf.empty() && errno == ENOENT;
  size_t got = buf.empty() ? 0 : std::fread(buf.data(), 1, buf.size(), f);
  bool exact = got == buf.size() && std::fgetc(f) == EOF;
  std::fclose(f);
  return exact;
}

bool writeShard(const std::string &path,
                const std::vector<unsigned char> &buf) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return false;
  bool ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
  return std::fclose(f) == 0 && ok;
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 5 || std::strcmp(argv[1], "--src") ||
      std::strcmp(argv[3], "--dst")) {
    if (rank == 0)
      std::fprintf(stderr, "usage: refit --src DIR --dst DIR\n");
    MPI_Finalize();
    return 1;
  }
  const char *srcDir = argv[2], *dstDir = argv[4];

  // Only this rank's shards: a byte count < 0 means "not on that mesh".
  int tensors = refit_plan_num_tensors();
  std::vector<std::vector<unsigned char>> src(tensors), dst(tensors);
  std::vector<void *> srcPtr(tensors, nullptr), dstPtr(tensors, nullptr);
  std::vector<bool> hasDst(tensors, false);
  int status = 0;
  for (int t = 0; t < tensors; ++t) {
    int64_t srcBytes = refit_plan_src_bytes(rank, t);
    int64_t dstBytes = refit_plan_dst_bytes(rank, t);
    if (srcBytes >= 0) {
      src[t].resize(srcBytes);
      if (!readShard(shardPath(srcDir, rank, t), src[t])) {
        std::fprintf(stderr, "rank %d: %s: missing or not %lld bytes\n", rank,
                     shardPath(srcDir, rank, t).c_str(), (long long)srcBytes);
        status = 1;
      }
      srcPtr[t] = src[t].data();
    }
    if (dstBytes >= 0) {
      dst[t].resize(dstBytes);
      dstPtr[t] = dst[t].data();
      hasDst[t] = true; // written even when empty, as reshard-run does
    }
  }
  // A rank with a bad file still calls the plan, with a null source, so
  // that every rank gets the error from the plan's agreement step instead of
  // waiting for it.
  if (status)
    std::fill(srcPtr.begin(), srcPtr.end(), nullptr);

  std::vector<unsigned char> workspace(refit_plan_workspace_bytes(rank));
  char err[512] = "";
  int rc = refit_plan_run(rank, srcPtr.data(), dstPtr.data(), MPI_COMM_WORLD,
                          nullptr, workspace.data(), workspace.size(), err,
                          sizeof err);
  if (rc != 0) {
    std::fprintf(stderr, "rank %d: refit_plan_run: %d: %s\n", rank, rc, err);
    status = status ? status : 10 + rc;
  }
  for (int t = 0; t < tensors && status == 0; ++t)
    if (hasDst[t] && !writeShard(shardPath(dstDir, rank, t), dst[t])) {
      std::fprintf(stderr, "rank %d: cannot write %s\n", rank,
                   shardPath(dstDir, rank, t).c_str());
      status = 1;
    }
  MPI_Finalize();
  return status;
}
