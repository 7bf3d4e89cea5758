/*===- MpiDriver.h - A ready-made MPI program around one plan ---*- C++ -*-===*
 *
 * Compile a plan generated with --backend=mpi with -DRESHARD_MPI_DRIVER to
 * get a program that, on every rank, reads its source shards from
 * SRC/rank<R>.<tensor>.bin, runs the plan, and writes its destination
 * shards to DST/rank<R>.<tensor>.bin (the format of reshard-run):
 *
 *   mpirun -n N ./plan --src SRC --dst DST
 *
 * A rank reads a file for every tensor whose source mesh it is in (an
 * empty shard is an empty file, or none) and writes one for every tensor
 * whose destination mesh it is in (DST is created if missing). Exit status: 0,
 * 1 for bad usage or files, or 10 + the error code of <plan>_run.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_MPIDRIVER_H
#define RESHARD_EXECUTIONENGINE_MPIDRIVER_H

#include "reshard/ExecutionEngine/MpiBackend.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace reshard {
namespace engine {

inline std::string shard_path(const char *dir, int rank, const char *tensor) {
  return std::string(dir) + "/rank" + std::to_string(rank) + "." + tensor +
         ".bin";
}

/* Reads exactly `bytes` bytes; false (with a message) on any mismatch. A
 * missing file is an empty shard. */
inline bool read_exact(const std::string &path, std::vector<uint8_t> &out,
                       int64_t bytes, char *msg, size_t len) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f && bytes == 0 && errno == ENOENT) {
    out.clear();
    return true;
  }
  if (!f) {
    std::snprintf(msg, len, "%s: cannot open", path.c_str());
    return false;
  }
  out.assign(static_cast<size_t>(bytes), 0);
  size_t got = bytes ? std::fread(out.data(), 1, out.size(), f) : 0;
  int extra = std::fgetc(f);
  std::fclose(f);
  if (static_cast<int64_t>(got) != bytes || extra != EOF) {
    std::snprintf(msg, len, "%s: expected exactly %lld bytes", path.c_str(),
                  static_cast<long long>(bytes));
    return false;
  }
  return true;
}

/* Writes `data` to `path` (replacing it); false on any failure. */
inline bool write_all(const std::string &path,
                      const std::vector<uint8_t> &data) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return false;
  bool ok = data.empty() ||
            std::fwrite(data.data(), 1, data.size(), f) == data.size();
  return std::fclose(f) == 0 && ok;
}

inline int driver_main(const Plan &plan, int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *src_dir = 0, *dst_dir = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--src"))
      src_dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--dst"))
      dst_dir = argv[i + 1];
  }
  char msg[1024] = "";
  int bad = 0;
  if (!src_dir || !dst_dir || argc != 5) {
    std::snprintf(msg, sizeof(msg), "usage: %s --src DIR --dst DIR", argv[0]);
    bad = 1;
  } else if (mkdir(dst_dir, 0777) != 0 && errno != EEXIST) {
    std::snprintf(msg, sizeof(msg), "%s: cannot create the directory: %s",
                  dst_dir, std::strerror(errno));
    bad = 1;
  }
  std::vector<std::vector<uint8_t>> src(plan.num_tensors),
      dst(plan.num_tensors);
  std::vector<void *> src_ptrs(plan.num_tensors, nullptr),
      dst_ptrs(plan.num_tensors, nullptr);
  std::vector<int64_t> src_bytes(plan.num_tensors, -1),
      dst_bytes(plan.num_tensors, -1);
  /* By mesh membership, not by program: a rank whose only part is an empty
   * destination shard has no program but still writes its (empty) file. */
  shard_table(plan, rank, true, src_bytes.data());
  shard_table(plan, rank, false, dst_bytes.data());
  for (int t = 0; !bad && t < plan.num_tensors; ++t) {
    if (std::strchr(plan.tensor_names[t], '/')) {
      std::snprintf(msg, sizeof(msg),
                    "tensor '%s' cannot name a shard file (it contains '/')",
                    plan.tensor_names[t]);
      bad = 1;
      break;
    }
    if (src_bytes[t] >= 0 &&
        !read_exact(shard_path(src_dir, rank, plan.tensor_names[t]), src[t],
                    src_bytes[t], msg, sizeof(msg))) {
      bad = 1;
      break;
    }
    dst[t].assign(dst_bytes[t] > 0 ? dst_bytes[t] : 0, 0);
    src_ptrs[t] = src[t].empty() ? nullptr : src[t].data();
    dst_ptrs[t] = dst[t].empty() ? nullptr : dst[t].data();
  }
  /* Stop together when any rank could not read its inputs. */
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_bad) {
    if (bad)
      std::fprintf(stderr, "%s: rank %d: %s\n", plan.name, rank, msg);
    MPI_Finalize();
    return 1;
  }
  std::vector<uint8_t> workspace(workspace_bytes(plan, rank));
  char err[1024] = "";
  int rc =
      mpi::run(plan, rank, src_ptrs.data(), dst_ptrs.data(), MPI_COMM_WORLD,
               workspace.data(), workspace.size(), err, sizeof(err));
  if (rc) {
    std::fprintf(stderr, "%s: rank %d: error %d: %s\n", plan.name, rank, rc,
                 err);
    MPI_Finalize();
    return 10 + rc;
  }
  for (int t = 0; t < plan.num_tensors; ++t) {
    if (dst_bytes[t] < 0)
      continue;
    std::string path = shard_path(dst_dir, rank, plan.tensor_names[t]);
    if (!write_all(path, dst[t])) {
      std::fprintf(stderr, "%s: rank %d: %s: cannot write\n", plan.name, rank,
                   path.c_str());
      MPI_Finalize();
      return 1;
    }
  }
  MPI_Finalize();
  return 0;
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_MPIDRIVER_H */
