// Shared by the two measured MPI programs (reshard's plan and the
// gather+broadcast baseline): their options and the one way both are timed
// (barrier, wall time of the slowest rank, median). Shard files in
// reshard-run's format are read and written with the MPI driver's helpers
// (reshard/ExecutionEngine/MpiDriver.h).
#ifndef RESHARD_BENCH_MEASURED_TIMING_H
#define RESHARD_BENCH_MEASURED_TIMING_H

#include "reshard/ExecutionEngine/MpiDriver.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace bench {

// The options both programs take, from argv[first] on: --src DIR --dst DIR
// [--reps N]. False when one is missing or bad.
struct Options {
  std::string src_dir, dst_dir;
  int reps = 5;
};
inline bool parse_options(int argc, char **argv, int first, Options &o) {
  for (int i = first; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--src"))
      o.src_dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--dst"))
      o.dst_dir = argv[i + 1];
    else if (!std::strcmp(argv[i], "--reps"))
      o.reps = std::atoi(argv[i + 1]);
  }
  return !o.src_dir.empty() && !o.dst_dir.empty() && o.reps >= 1;
}

// Times `reps` calls of `body` (returning 0 on success), after one untimed
// warm-up call (first touch of the buffers, MPI's connection setup). Before
// each call `reset` runs (untimed: it clears the destinations so that the
// files written after the last call prove that call moved the data), then
// a barrier; a repetition's time is the slowest rank's wall time from the
// barrier to the end of its call. Rank 0 prints one line per repetition
// and the median. Returns the first nonzero status of any rank.
template <typename Reset, typename Body>
int time_reps(const char *label, int reps, Reset reset, Body body) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<double> times;
  for (int r = -1; r < reps; ++r) {
    reset();
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int rc = body();
    double mine = MPI_Wtime() - t0, slowest = 0;
    int worst = 0;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (worst)
      return worst;
    if (r < 0)
      continue;
    times.push_back(slowest);
    if (rank == 0)
      std::printf("%s: rep %d: %.6f s\n", label, r, slowest);
  }
  if (rank == 0 && !times.empty()) {
    std::vector<double> s = times;
    std::sort(s.begin(), s.end());
    double median = s.size() % 2 ? s[s.size() / 2]
                                 : (s[s.size() / 2 - 1] + s[s.size() / 2]) / 2;
    std::printf("%s: median %.6f s min %.6f s max %.6f s over %d reps\n", label,
                median, s.front(), s.back(), reps);
  }
  return 0;
}

} // namespace bench

#endif // RESHARD_BENCH_MEASURED_TIMING_H
