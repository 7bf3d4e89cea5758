// What both refit replays share (bench/simgrid/refit_sim.cpp on SimGrid,
// bench/replay/refit_fluid.cpp on its own max-min solver): the command line,
// the flow list read into per-rank programs, the plan's totals and the JSON
// line they print. Header-only: each replay is one g++ command of
// bench/sim_bench.py, outside the CMake build.
//
// A flow list has one `STEP SRC DST BYTES` per line (`#` comments; SRC = DST
// is a rank's local copies): `reshard-translate --reshard-to-flows` writes
// one from a lowered plan, with the messages the execution engine sends (one
// per peer and direction each step).
#ifndef RESHARD_BENCH_REPLAY_FLOW_LIST_H
#define RESHARD_BENCH_REPLAY_FLOW_LIST_H

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace replay {

/// The cluster of the plan's topology (bench/make_refit_scenario.py
/// TOPOLOGIES): GPU r is in NVLink domain r / domain; each GPU has a NIC
/// (up and down, nicGBps each, the up link carrying nicLatUs) and an NVLink
/// port (nvlGBps each way, nvlLatUs). GB/s are 10^9 bytes per second.
struct Topology {
  long gpusPerNode = 8, domain = 8;
  double nicGBps = 50, nvlGBps = 450, nicLatUs = 5, nvlLatUs = 1;

  bool sameDomain(long a, long b) const { return a / domain == b / domain; }
};

struct Msg {
  long peer;
  int64_t bytes;
  long id; // the flow line's index among the messages: joins both sides
};
struct Step {
  long index;
  std::vector<Msg> sends, recvs;
};
struct RankProgram {
  int64_t copyBytes = 0;
  std::vector<Step> steps; // in increasing index order
};

struct Options {
  Topology topo;
  std::string name = "plan", path, copies = "nvlink";
  bool receivesAhead = false, barrier = false;
  std::vector<std::string> extra; // --cfg=... (SimGrid only)
  double quantum = 0;             // --quantum SECONDS (fluid only)
};

[[noreturn]] inline void die(const char *tool, const std::string &msg) {
  std::fprintf(stderr, "%s: %s\n", tool, msg.c_str());
  std::exit(2);
}

/// Parses the replays' shared command line:
///   TOOL --topology GPN,DOMAIN,NIC_GBPS,NVL_GBPS,NIC_LAT_US,NVL_LAT_US
///        [--name NAME] [--copies ignore|nvlink] [--receives-ahead]
///        [--barrier] [--cfg=...] [--quantum SECONDS] FILE
/// `--cfg=` (SimGrid) and `--quantum` (the fluid replay) are taken only by
/// the tool they are for.
enum class Simulator { SimGrid, Fluid };
inline Options parseOptions(const char *tool, int argc, char **argv,
                            Simulator simulator) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        die(tool, "missing value for " + a);
      return argv[++i];
    };
    if (a == "--topology") {
      std::string v = value();
      Topology &t = o.topo;
      if (std::sscanf(v.c_str(), "%ld,%ld,%lf,%lf,%lf,%lf", &t.gpusPerNode,
                      &t.domain, &t.nicGBps, &t.nvlGBps, &t.nicLatUs,
                      &t.nvlLatUs) != 6 ||
          t.domain <= 0 || !(t.nicGBps > 0) || !(t.nvlGBps > 0) ||
          t.nicLatUs < 0 || t.nvlLatUs < 0)
        die(tool, "--topology GPN,DOMAIN,NIC_GBPS,NVL_GBPS,NIC_LAT_US,"
                  "NVL_LAT_US (positive bandwidths, latencies >= 0)");
    } else if (a == "--name") {
      o.name = value();
    } else if (a == "--copies") {
      o.copies = value();
      if (o.copies != "nvlink" && o.copies != "ignore")
        die(tool, "--copies nvlink|ignore");
    } else if (a == "--barrier") {
      o.barrier = true;
    } else if (a == "--receives-ahead") {
      o.receivesAhead = true;
    } else if (simulator == Simulator::SimGrid && a.rfind("--cfg=", 0) == 0) {
      o.extra.push_back(a);
    } else if (simulator == Simulator::Fluid && a == "--quantum") {
      std::string v = value();
      char *end = nullptr;
      o.quantum = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(o.quantum >= 0) || o.quantum > 1)
        die(tool, "--quantum SECONDS: a number of seconds in [0, 1]");
    } else if (a[0] == '-') {
      die(tool, "unknown option " + a);
    } else {
      o.path = a;
    }
  }
  if (o.path.empty())
    die(tool, std::string("usage: ") + tool +
                  " --topology GPN,DOMAIN,NIC,NVL,NIC_LAT_US,NVL_LAT_US FILE");
  return o;
}

inline Step &stepOf(RankProgram &r, long index) {
  if (!r.steps.empty() && r.steps.back().index == index)
    return r.steps.back();
  if (r.steps.empty() || r.steps.back().index < index) {
    r.steps.push_back({index, {}, {}});
    return r.steps.back();
  }
  auto at = std::lower_bound(r.steps.begin(), r.steps.end(), index,
                             [](const Step &s, long i) { return s.index < i; });
  if (at == r.steps.end() || at->index != index)
    at = r.steps.insert(at, Step{index, {}, {}});
  return *at;
}

/// Reads a flow list into per-rank programs.
inline std::map<long, RankProgram> readPrograms(const char *tool,
                                                const std::string &path) {
  std::ifstream in(path);
  if (!in)
    die(tool, "cannot open " + path);
  std::map<long, RankProgram> ranks;
  std::string line;
  long id = 0;
  while (std::getline(in, line)) {
    size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos || line[p] == '#')
      continue;
    const char *s = line.c_str() + p;
    // Anything else than a flow is an error, not silently skipped (a
    // skipped file would simulate in 0 s).
    long st, src, dst;
    long long bytes;
    if (!std::isdigit(static_cast<unsigned char>(*s)) ||
        std::sscanf(s, "%ld %ld %ld %lld", &st, &src, &dst, &bytes) != 4 ||
        st < 0 || src < 0 || dst < 0 || bytes < 0)
      die(tool, "malformed flow line: " + line.substr(0, 120));
    if (src == dst) {
      ranks[src].copyBytes += bytes;
      continue;
    }
    stepOf(ranks[src], st).sends.push_back({dst, bytes, id});
    stepOf(ranks[dst], st).recvs.push_back({src, bytes, id});
    ++id;
  }
  return ranks;
}

/// The plan's totals, as both replays print them.
struct Totals {
  long numRanks = 0, maxStep = -1;
  int64_t messages = 0, netBytes = 0, nvlBytes = 0, copyBytes = 0;
  std::set<std::pair<long, long>> pairs; // (sender, receiver)
};

inline Totals totalsOf(const std::map<long, RankProgram> &programs,
                       const Topology &topo) {
  Totals t;
  for (auto &[r, prog] : programs) {
    t.numRanks = std::max(t.numRanks, r + 1);
    t.copyBytes += prog.copyBytes;
    for (const Step &s : prog.steps) {
      t.maxStep = std::max(t.maxStep, s.index);
      for (const Msg &m : s.sends) {
        t.numRanks = std::max(t.numRanks, m.peer + 1);
        t.pairs.insert({r, m.peer});
        ++t.messages;
        (topo.sameDomain(r, m.peer) ? t.nvlBytes : t.netBytes) += m.bytes;
      }
    }
  }
  return t;
}

/// The replay's one JSON line; `extra` is appended inside the object, and
/// a --quantum after it.
inline void printResult(const Options &o, const Totals &t, double seconds,
                        const std::string &extra = "") {
  std::printf(
      "{\"name\": \"%s\", \"simulated_seconds\": %.9g, \"ranks\": %ld, "
      "\"steps\": %ld, \"messages\": %lld, \"network_bytes\": %lld, "
      "\"nvlink_bytes\": %lld, \"local_bytes\": %lld, \"copies\": \"%s\"%s",
      o.name.c_str(), seconds, t.numRanks, t.maxStep + 1,
      static_cast<long long>(t.messages), static_cast<long long>(t.netBytes),
      static_cast<long long>(t.nvlBytes), static_cast<long long>(t.copyBytes),
      o.copies.c_str(), extra.c_str());
  if (o.quantum > 0)
    std::printf(", \"quantum\": %.9g", o.quantum);
  std::printf("}\n");
}

} // namespace replay

#endif // RESHARD_BENCH_REPLAY_FLOW_LIST_H
