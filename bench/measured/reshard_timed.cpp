// Times a plan generated with `reshard-translate --reshard-to-cpp
// --backend=mpi` (lowered with plan-name=refit) through its C ABI, the way
// bench/measured/gather_bcast.cpp times the baseline; link it with the
// generated plan.cpp (compiled without -DRESHARD_MPI_DRIVER):
//
//   mpirun -n N ./reshard_timed --src DIR --dst DIR [--reps R]
//
// Shards are read from and written to DIR/rank<R>.<tensor>.bin (the format
// of reshard-run) outside the timed region.
#include "timing.h"

#include <cstdlib>

extern "C" {
size_t refit_workspace_bytes(int rank);
int refit_run(int rank, void *const *src, void *const *dst, MPI_Comm comm,
              void *stream, void *workspace, size_t workspace_bytes, char *err,
              size_t errlen);
int refit_num_ranks(void);
int refit_num_tensors(void);
const char *refit_tensor_name(int tensor);
int64_t refit_src_bytes(int rank, int tensor);
int64_t refit_dst_bytes(int rank, int tensor);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  bench::Options opts;
  int bad = !bench::parse_options(argc, argv, 1, opts);
  if (bad && rank == 0)
    std::fprintf(stderr,
                 "usage: reshard_timed --src DIR --dst DIR [--reps R]\n");
  const std::string &src_dir = opts.src_dir, &dst_dir = opts.dst_dir;
  const int reps = opts.reps;
  const int nt = refit_num_tensors();
  std::vector<std::vector<uint8_t>> src(nt), dst(nt);
  std::vector<void *> src_ptrs(nt, nullptr), dst_ptrs(nt, nullptr);
  bool in_plan = rank < refit_num_ranks();
  for (int t = 0; !bad && in_plan && t < nt; ++t) {
    int64_t sb = refit_src_bytes(rank, t), db = refit_dst_bytes(rank, t);
    std::string path = reshard::engine::shard_path(src_dir.c_str(), rank,
                                                   refit_tensor_name(t));
    char msg[512];
    if (sb >= 0 &&
        !reshard::engine::read_exact(path, src[t], sb, msg, sizeof(msg))) {
      std::fprintf(stderr, "reshard_timed: rank %d: cannot read %s\n", rank,
                   path.c_str());
      bad = 1;
    }
    dst[t].assign(db > 0 ? db : 0, 0);
    src_ptrs[t] = src[t].empty() ? nullptr : src[t].data();
    dst_ptrs[t] = dst[t].empty() ? nullptr : dst[t].data();
  }
  int any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_bad) {
    MPI_Finalize();
    return 1;
  }
  std::vector<uint8_t> ws(in_plan ? refit_workspace_bytes(rank) : 0);
  char err[1024] = "";
  int rc = bench::time_reps(
      "reshard", reps,
      [&] {
        for (auto &d : dst)
          std::memset(d.data(), 0, d.size());
      },
      [&] {
        int r =
            refit_run(rank, src_ptrs.data(), dst_ptrs.data(), MPI_COMM_WORLD,
                      nullptr, ws.data(), ws.size(), err, sizeof(err));
        if (r)
          std::fprintf(stderr, "reshard_timed: rank %d: error %d: %s\n", rank,
                       r, err);
        return r;
      });
  if (rc) {
    MPI_Finalize();
    return 10 + rc;
  }
  int wbad = 0;
  for (int t = 0; in_plan && t < nt; ++t)
    if (refit_dst_bytes(rank, t) >= 0 &&
        !reshard::engine::write_all(
            reshard::engine::shard_path(dst_dir.c_str(), rank,
                                        refit_tensor_name(t)),
            dst[t]))
      wbad = 1;
  MPI_Finalize();
  return wbad;
}
