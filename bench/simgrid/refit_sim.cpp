// refit_sim: replays a refit plan's per-rank programs in a flow-level network
// simulation (SimGrid S4U) of a DGX H100 or GB200 NVL72 cluster and prints
// the simulated time as one JSON line. Built by bench/sim_bench.py with g++
// against Debian's libsimgrid-dev (3.32); not part of the CMake build.
//
//   refit_sim --topology GPN,DOMAIN,NIC_GBPS,NVL_GBPS,NIC_LAT_US,NVL_LAT_US
//             [--name NAME] [--copies ignore|nvlink] [--receives-ahead]
//             [--barrier] FILE
//
// FILE is a flow list (bench/replay/flow_list.h, which this replay shares
// with bench/replay/refit_fluid.cpp): `reshard-translate --reshard-to-flows`
// writes one from a lowered plan, and sim_bench.py writes the
// gather-broadcast baselines the same way.
//
// Semantics replayed (docs/Runtime.md): one actor per rank; the rank's local
// copies first, then its steps in order; all sends and receives of a step are
// posted together and the rank moves on when all of them have completed (the
// NCCL backend: one group per step). A message flows once both its sender
// and its receiver have reached the step (rendezvous, as ncclSend/ncclRecv
// and MPI_Isend/MPI_Irecv of large messages). Ranks never wait for ranks they
// do not exchange with. --receives-ahead replays the MPI backend: a rank
// posts its next step's receives before its current step completes (its
// sends still wait: a relay forwards what arrived the step before).
// --barrier is a what-if that is no backend: every rank finishes step s
// before any starts step s + 1 (a rank's local copies then delay everyone's
// first step).
//
// The platform, built below in code (an XML file would need one <route> per
// pair of GPUs), with the numbers of the plan's topology (the same as
// bench/make_refit_scenario.py TOPOLOGIES):
//   * one host per GPU (global rank r = host r); GPU r is in NVLink domain
//     r / DOMAIN (DGX H100: 8 GPUs per node = per domain, NVSwitch; GB200
//     NVL72: 72-GPU domains of 4-GPU nodes).
//   * per GPU, a NIC: one link up and one down (split duplex), NIC_GBPS each
//     (DGX H100 and GB200: 400 Gb/s ConnectX-7 = 50 GB/s per GPU); the up
//     link carries the whole NIC-to-NIC latency, NIC_LAT_US (5 us).
//   * per GPU, an NVLink port: one link up and one down, NVL_GBPS each (DGX
//     H100: 450 GB/s per direction = 900 GB/s bidirectional NVLink 4;
//     GB200: 900 GB/s per direction = 1.8 TB/s NVLink 5); the up link
//     carries the whole GPU-to-GPU NVLink latency, NVL_LAT_US (1 us).
//   * the scale-out fabric (full bisection: a rail-optimised fat tree is,
//     for these patterns) and each domain's NVSwitch are non-blocking, so
//     they are no links at all: a route between GPUs of different domains is
//     the sender's NIC up and the receiver's NIC down; within a domain, the
//     sender's NVLink up and the receiver's NVLink down. (A link of infinite
//     bandwidth shared by every flow changes no rate but joins every flow
//     into one max-min system that SimGrid re-solves whole at each
//     completion: qwen235b-dgx took hours instead of 13-20 s.) So an
//     uncontended message of b bytes takes
//     latency + b / bandwidth; concurrent flows share every link max-min
//     fairly (SimGrid's CM02 model with latency and bandwidth factors 1, no
//     TCP window bound (TCP-gamma 0) and no cross traffic of acknowledgements).
//   * local copies (a rank to itself): charged at NVLink bandwidth without
//     latency (`--copies nvlink`, like the cost model) or ignored.
// GB/s are 10^9 bytes per second.
#include "../replay/flow_list.h"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

using namespace replay;

struct Platform {
  std::vector<sg4::Host *> hosts;
  std::vector<sg4::Link *> nicUp, nicDown, nvlUp, nvlDown;
};

Platform buildPlatform(const Topology &t, long numRanks,
                       const std::set<std::pair<long, long>> &pairs) {
  Platform p;
  auto *zone = sg4::create_full_zone("cluster");
  for (long r = 0; r < numRanks; ++r) {
    std::string n = std::to_string(r);
    p.hosts.push_back(zone->create_host("gpu" + n, 1e12)->seal());
    p.nicUp.push_back(zone->create_link("nic_up" + n, t.nicGBps * 1e9)
                          ->set_latency(t.nicLatUs * 1e-6)
                          ->seal());
    p.nicDown.push_back(zone->create_link("nic_down" + n, t.nicGBps * 1e9)
                            ->set_latency(0)
                            ->seal());
    p.nvlUp.push_back(zone->create_link("nvl_up" + n, t.nvlGBps * 1e9)
                          ->set_latency(t.nvlLatUs * 1e-6)
                          ->seal());
    p.nvlDown.push_back(zone->create_link("nvl_down" + n, t.nvlGBps * 1e9)
                            ->set_latency(0)
                            ->seal());
  }
  for (auto [a, b] : pairs) {
    std::vector<sg4::LinkInRoute> links;
    if (t.sameDomain(a, b))
      links = {sg4::LinkInRoute(p.nvlUp[a]), sg4::LinkInRoute(p.nvlDown[b])};
    else
      links = {sg4::LinkInRoute(p.nicUp[a]), sg4::LinkInRoute(p.nicDown[b])};
    zone->add_route(p.hosts[a]->get_netpoint(), p.hosts[b]->get_netpoint(),
                    nullptr, nullptr, links, /*symmetrical=*/false);
  }
  zone->seal();
  return p;
}

std::string mailboxName(long src, long dst) {
  return std::to_string(src) + ">" + std::to_string(dst);
}

} // namespace

int main(int argc, char **argv) {
  // Plain latency + size / bandwidth per link, max-min sharing, nothing else.
  std::vector<std::string> cfg = {
      // Full: SimGrid 3.32's lazy updates let llama70b-gb200's 24 ingress
      // NICs carry 52 GB/s each, 4% under the physical bound; the full
      // solve keeps every link within its bandwidth.
      "--cfg=network/optim:Full",       "--cfg=network/model:CM02",
      "--cfg=network/latency-factor:1", "--cfg=network/bandwidth-factor:1",
      "--cfg=network/weight-S:0",       "--cfg=network/TCP-gamma:0",
      "--cfg=network/crosstraffic:0",   "--log=root.thres:critical"};
  Options opts = parseOptions("refit_sim", argc, argv, Simulator::SimGrid);
  cfg.insert(cfg.end(), opts.extra.begin(), opts.extra.end());
  const Topology &topo = opts.topo;
  const std::string &copies = opts.copies;
  bool receivesAhead = opts.receivesAhead, barrier = opts.barrier;
  std::map<long, RankProgram> programs = readPrograms("refit_sim", opts.path);
  Totals totals = totalsOf(programs, topo);
  long maxStep = totals.maxStep;

  std::vector<char *> args = {argv[0]};
  for (std::string &c : cfg)
    args.push_back(c.data());
  int sgArgc = args.size();
  sg4::Engine engine(&sgArgc, args.data());
  Platform plat = buildPlatform(topo, totals.numRanks, totals.pairs);

  double copyBw = topo.nvlGBps * 1e9;
  long actors = 0;
  for (auto &[r, prog] : programs)
    actors += !prog.steps.empty() || (copies == "nvlink" && prog.copyBytes);
  sg4::BarrierPtr stepBarrier = sg4::Barrier::create(std::max(actors, 1L));
  for (auto &[r, prog] : programs) {
    if (prog.steps.empty() && (copies == "ignore" || prog.copyBytes == 0))
      continue;
    const RankProgram *pp = &prog;
    long me = r;
    sg4::Actor::create(
        "rank" + std::to_string(r), plat.hosts[r],
        [pp, me, copyBw, copies, receivesAhead, barrier, stepBarrier,
         maxStep]() {
          if (copies == "nvlink" && pp->copyBytes)
            sg4::this_actor::sleep_for(static_cast<double>(pp->copyBytes) /
                                       copyBw);
          static int token;
          std::vector<std::vector<int *>> sinks(pp->steps.size());
          auto postReceives = [&](size_t i, std::vector<sg4::CommPtr> &out) {
            const Step &s = pp->steps[i];
            sinks[i].resize(s.recvs.size());
            for (size_t k = 0; k < s.recvs.size(); ++k)
              out.push_back(
                  sg4::Mailbox::by_name(mailboxName(s.recvs[k].peer, me))
                      ->get_async<int>(&sinks[i][k]));
          };
          std::vector<sg4::CommPtr> comms, ahead;
          long first = pp->steps.empty() ? maxStep + 1 : pp->steps[0].index;
          for (long k = 0; barrier && k < first; ++k)
            stepBarrier->wait();
          for (size_t i = 0; i < pp->steps.size(); ++i) {
            const Step &s = pp->steps[i];
            comms.swap(ahead);
            ahead.clear();
            if (!receivesAhead || i == 0)
              postReceives(i, comms);
            for (const Msg &m : s.sends)
              comms.push_back(
                  sg4::Mailbox::by_name(mailboxName(me, m.peer))
                      ->put_async(&token, static_cast<uint64_t>(m.bytes)));
            // The MPI backend: the next step's receives are posted before
            // this step completes (its sends still wait: a relay forwards
            // what arrived the step before).
            if (receivesAhead && i + 1 < pp->steps.size())
              postReceives(i + 1, ahead);
            sg4::Comm::wait_all(comms);
            comms.clear();
            // What-if: every rank finishes step s before any starts s + 1
            // (once per step index, the idle ones included).
            long next =
                i + 1 < pp->steps.size() ? pp->steps[i + 1].index : maxStep + 1;
            for (long k = barrier ? s.index : next; k < next; ++k)
              stepBarrier->wait();
          }
        });
  }
  engine.run();
  printResult(opts, totals, sg4::Engine::get_clock());
  return 0;
}
