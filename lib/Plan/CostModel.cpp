//===- CostModel.cpp - Bytes per link, bounds, estimated time -------------===//
#include "reshard/Plan/CostModel.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <set>

using namespace reshard;
using llvm::formatv;

namespace {
/// Link parameters of the plan's topology (defaults without one).
struct Links {
  std::optional<TopologySpec> topo;
  TopologySpec spec;
  explicit Links(const PlannedTensor &pt) : topo(pt.topology) {
    if (topo)
      spec = *topo;
  }
  int64_t domainOf(int64_t rank) const {
    return topo ? rank / topo->nvlDomainSize : rank;
  }
  LinkClass classOf(int64_t from, int64_t to) const {
    if (from == to)
      return kLocal;
    return domainOf(from) == domainOf(to) ? kNVLink : kNetwork;
  }
};

double seconds(int64_t bytes, double gbps, double latencyUs) {
  if (!bytes)
    return 0;
  return latencyUs * 1e-6 + static_cast<double>(bytes) / (gbps * 1e9);
}
} // namespace

PlanFigures reshard::evaluateTransfers(const std::vector<Transfer> &transfers,
                                       const PlannedTensor &anyTensor) {
  Links links(anyTensor);
  PlanFigures f;
  // Per step and rank: bytes on each link direction.
  struct StepRank {
    int64_t nicOut = 0, nicIn = 0, nvlOut = 0, nvlIn = 0, local = 0;
  };
  std::map<int64_t, std::map<int64_t, StepRank>> perStep;
  std::set<std::tuple<int64_t, int64_t, int64_t>> messages;
  for (const Transfer &t : transfers) {
    LinkClass c = links.classOf(t.from, t.to);
    f.bytes[c] += t.bytes;
    RankFigures &out = f.perRank[t.from], &in = f.perRank[t.to];
    if (c == kLocal) {
      out.bytesOut[c] += t.bytes;
      ++out.messagesOut[c];
      ++f.messages[c];
      perStep[t.step][t.from].local += t.bytes;
      continue;
    }
    out.bytesOut[c] += t.bytes;
    in.bytesIn[c] += t.bytes;
    // Everything one rank sends another in one step is one message.
    if (messages.insert({t.step, t.from, t.to}).second) {
      ++out.messagesOut[c];
      ++in.messagesIn[c];
      ++f.messages[c];
    }
    StepRank &s = perStep[t.step][t.from], &r = perStep[t.step][t.to];
    (c == kNetwork ? s.nicOut : s.nvlOut) += t.bytes;
    (c == kNetwork ? r.nicIn : r.nvlIn) += t.bytes;
  }
  const TopologySpec &spec = links.spec;
  for (auto &[step, ranks] : perStep) {
    double stepSeconds = 0;
    for (auto &[rank, s] : ranks) {
      double t =
          std::max({seconds(s.nicOut, spec.nicGBps, spec.nicLatencyUs),
                    seconds(s.nicIn, spec.nicGBps, spec.nicLatencyUs),
                    seconds(s.nvlOut, spec.nvlinkGBps, spec.nvlinkLatencyUs),
                    seconds(s.nvlIn, spec.nvlinkGBps, spec.nvlinkLatencyUs),
                    seconds(s.local, spec.nvlinkGBps, 0)});
      stepSeconds = std::max(stepSeconds, t);
    }
    f.estimatedSeconds += stepSeconds;
  }
  f.steps = perStep.size();
  for (auto &[rank, r] : f.perRank) {
    if (r.bytesOut[kNetwork] > f.busiestNicOutBytes) {
      f.busiestNicOutBytes = r.bytesOut[kNetwork];
      f.busiestNicOutRank = rank;
    }
    if (r.bytesIn[kNetwork] > f.busiestNicInBytes) {
      f.busiestNicInBytes = r.bytesIn[kNetwork];
      f.busiestNicInRank = rank;
    }
  }
  return f;
}

/// The plan's own transfers: a relayed piece is sent by its relay.
static std::vector<Transfer> planTransfers(llvm::ArrayRef<PlannedTensor> ts) {
  std::vector<Transfer> out;
  for (const PlannedTensor &pt : ts)
    for (size_t i = 0; i < pt.table.size(); ++i) {
      PieceTable::Piece p = pt.table[i];
      int64_t from = p.via() == -1 ? p.srcRank() : p.via();
      out.push_back({p.step(), from, p.dstRank(), pt.pieceBytes(i)});
    }
  return out;
}

/// The `direct` baseline: a local copy or the lowest holder, one step.
static std::vector<Transfer> directTransfers(llvm::ArrayRef<PlannedTensor> ts) {
  std::vector<Transfer> out;
  for (const PlannedTensor &pt : ts)
    for (size_t i = 0; i < pt.table.size(); ++i) {
      PieceTable::Piece p = pt.table[i];
      llvm::ArrayRef<int64_t> holders = pt.table.holders(p.holderGroup());
      bool local =
          std::binary_search(holders.begin(), holders.end(), p.dstRank());
      out.push_back({0, local ? p.dstRank() : holders.front(), p.dstRank(),
                     pt.pieceBytes(i)});
    }
  return out;
}

/// Which runs a source device holds: devices with equal signatures hold
/// the same data.
static std::vector<int64_t> shardSignature(const ShardGeometry &geom,
                                           llvm::ArrayRef<int64_t> coords) {
  std::vector<int64_t> sig;
  for (unsigned d = 0; d < geom.rank(); ++d)
    for (const DimSegment &s : geom.segments(d, coords))
      sig.insert(sig.end(), {d, s.globalBegin, s.size});
  return sig;
}

/// The `gather-broadcast` baseline: per tensor, the lowest source rank
/// gathers the full tensor (step 0: every distinct shard it lacks, from the
/// lowest rank holding it) and sends all of it to every other destination
/// rank (step 1), which keeps its shard.
static std::vector<Transfer>
gatherBroadcastTransfers(llvm::ArrayRef<PlannedTensor> ts) {
  std::vector<Transfer> out;
  for (const PlannedTensor &pt : ts) {
    const TensorLayout &l = pt.layout;
    int64_t full = l.elementBytes;
    for (int64_t d : l.shape)
      full *= d;
    if (!full)
      continue;
    std::vector<std::pair<int64_t, size_t>> byRank; // rank, mesh index
    for (size_t i = 0; i < l.src.mesh.ranks.size(); ++i)
      byRank.push_back({l.src.mesh.ranks[i], i});
    std::sort(byRank.begin(), byRank.end());
    int64_t root = byRank.front().first;
    ShardGeometry src = l.srcGeometry();
    std::set<std::vector<int64_t>> gathered;
    for (auto &[rank, index] : byRank) {
      auto coords = l.src.mesh.coords(index);
      int64_t bytes = src.localNumElements(coords) * l.elementBytes;
      if (!gathered.insert(shardSignature(src, coords)).second ||
          rank == root || bytes == 0)
        continue;
      out.push_back({0, rank, root, bytes});
    }
    ShardGeometry dst = l.dstGeometry();
    for (size_t i = 0; i < l.dst.mesh.ranks.size(); ++i) {
      int64_t rank = l.dst.mesh.ranks[i];
      out.push_back({1, root, rank,
                     rank == root ? dst.localNumElements(l.dst.mesh.coords(i)) *
                                        l.elementBytes
                                  : full});
    }
  }
  return out;
}

/// Lower bounds from the pieces, whoever sends them.
static PlanBounds computeBounds(llvm::ArrayRef<PlannedTensor> ts,
                                const Links &links) {
  PlanBounds b;
  llvm::DenseMap<int64_t, int64_t> ingress, egress, nonLocalIn;
  llvm::DenseMap<int64_t, llvm::DenseSet<int64_t>> receivers, senders;
  llvm::DenseSet<int64_t> networkHolders; // ranks holding network-bound data
  for (const PlannedTensor &pt : ts) {
    std::set<std::vector<int64_t>> counted; // (domain, group, box offset)
    for (size_t i = 0; i < pt.table.size(); ++i) {
      PieceTable::Piece p = pt.table[i];
      llvm::ArrayRef<int64_t> holders = pt.table.holders(p.holderGroup());
      int64_t domain = links.domainOf(p.dstRank());
      int64_t bytes = pt.pieceBytes(i);
      receivers[domain].insert(p.dstRank());
      for (int64_t h : holders)
        senders[links.domainOf(h)].insert(h);
      if (!std::binary_search(holders.begin(), holders.end(), p.dstRank()))
        nonLocalIn[p.dstRank()] += bytes;
      if (llvm::any_of(holders,
                       [&](int64_t h) { return links.domainOf(h) == domain; }))
        continue;
      std::vector<int64_t> key = {domain, p.holderGroup()};
      key.insert(key.end(), p.globalOffset().begin(), p.globalOffset().end());
      if (!counted.insert(key).second)
        continue;
      b.networkBytes += bytes;
      networkHolders.insert(holders.begin(), holders.end());
      ingress[domain] += bytes;
      int64_t holderDomain = links.domainOf(holders.front());
      if (llvm::all_of(holders, [&](int64_t h) {
            return links.domainOf(h) == holderDomain;
          }))
        egress[holderDomain] += bytes;
    }
  }
  auto spread = [](int64_t bytes, size_t nics) {
    return nics ? (bytes + static_cast<int64_t>(nics) - 1) /
                      static_cast<int64_t>(nics)
                : bytes;
  };
  for (auto &[domain, bytes] : ingress)
    b.perNicBytes =
        std::max(b.perNicBytes, spread(bytes, receivers[domain].size()));
  for (auto &[domain, bytes] : egress)
    b.perNicBytes =
        std::max(b.perNicBytes, spread(bytes, senders[domain].size()));
  // Every network byte leaves through the NIC of some rank holding it.
  b.perNicBytes =
      std::max(b.perNicBytes, spread(b.networkBytes, networkHolders.size()));
  const TopologySpec &s = links.spec;
  b.seconds = seconds(b.perNicBytes, s.nicGBps, s.nicLatencyUs);
  // A destination takes what it needs from other GPUs through its NIC and
  // its NVLink at best, and pays at least the smaller latency.
  double minLatency = std::min(s.nicLatencyUs, s.nvlinkLatencyUs) * 1e-6;
  for (auto &[rank, bytes] : nonLocalIn)
    b.seconds = std::max(b.seconds,
                         minLatency + static_cast<double>(bytes) /
                                          ((s.nicGBps + s.nvlinkGBps) * 1e9));
  return b;
}

PlanReport reshard::buildReport(llvm::ArrayRef<PlannedTensor> tensors) {
  PlanReport r;
  if (tensors.empty())
    return r;
  const PlannedTensor *withTopo = &tensors.front();
  for (const PlannedTensor &pt : tensors)
    if (pt.topology) {
      withTopo = &pt;
      break;
    }
  Links links(*withTopo);
  r.hasTopology = links.topo.has_value();
  r.topology = links.spec;
  r.tensors = tensors.size();
  for (const PlannedTensor &pt : tensors)
    r.pieces += pt.table.size();
  r.plan = evaluateTransfers(planTransfers(tensors), *withTopo);
  r.direct = evaluateTransfers(directTransfers(tensors), *withTopo);
  r.gatherBroadcast =
      evaluateTransfers(gatherBroadcastTransfers(tensors), *withTopo);
  r.bounds = computeBounds(tensors, links);
  return r;
}

static const char *kClassNames[] = {"local", "nvlink", "network"};

static llvm::json::Object figuresJson(const PlanFigures &f, bool perRank) {
  llvm::json::Object o;
  o["network_bytes"] = f.bytes[kNetwork];
  o["nvlink_bytes"] = f.bytes[kNVLink];
  o["local_bytes"] = f.bytes[kLocal];
  o["network_messages"] = f.messages[kNetwork];
  o["nvlink_messages"] = f.messages[kNVLink];
  o["local_copies"] = f.messages[kLocal];
  o["busiest_nic_out_bytes"] = f.busiestNicOutBytes;
  o["busiest_nic_out_rank"] = f.busiestNicOutRank;
  o["busiest_nic_in_bytes"] = f.busiestNicInBytes;
  o["busiest_nic_in_rank"] = f.busiestNicInRank;
  o["busiest_nic_bytes"] = std::max(f.busiestNicOutBytes, f.busiestNicInBytes);
  o["steps"] = f.steps;
  o["estimated_seconds"] = f.estimatedSeconds;
  if (perRank) {
    llvm::json::Array ranks;
    for (auto &[rank, rf] : f.perRank) {
      llvm::json::Object ro;
      ro["rank"] = rank;
      for (int c = 0; c < kNumLinkClasses; ++c) {
        llvm::json::Object co;
        co["bytes_out"] = rf.bytesOut[c];
        co["bytes_in"] = rf.bytesIn[c];
        co["messages_out"] = rf.messagesOut[c];
        co["messages_in"] = rf.messagesIn[c];
        ro[kClassNames[c]] = std::move(co);
      }
      ranks.push_back(std::move(ro));
    }
    o["per_rank"] = std::move(ranks);
  }
  return o;
}

/// a / b; 1 when both are 0 (nothing to move, nothing moved); -1 (shown as
/// n/a) when only the bound is 0.
static double ratio(double a, double b) {
  if (b > 0)
    return a / b;
  return a == 0 ? 1.0 : -1.0;
}

static llvm::json::Value ratioJson(double a, double b) {
  double r = ratio(a, b);
  return r < 0 ? llvm::json::Value(nullptr) : llvm::json::Value(r);
}

static std::string ratioText(double a, double b, const char *fmt) {
  double r = ratio(a, b);
  if (r < 0)
    return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof(buf), fmt, r);
  return buf;
}

void reshard::printReport(const PlanReport &r, ReportFormat format,
                          bool perRank, llvm::raw_ostream &os) {
  const PlanFigures &p = r.plan;
  int64_t busiest = std::max(p.busiestNicOutBytes, p.busiestNicInBytes);
  if (format == ReportFormat::Json) {
    llvm::json::Object o;
    llvm::json::Object topo;
    topo["present"] = r.hasTopology;
    topo["gpus_per_node"] = r.topology.gpusPerNode;
    topo["nvl_domain_size"] = r.topology.nvlDomainSize;
    topo["nic_GBps_per_gpu"] = r.topology.nicGBps;
    topo["nvlink_GBps_per_gpu"] = r.topology.nvlinkGBps;
    topo["nic_latency_us"] = r.topology.nicLatencyUs;
    topo["nvlink_latency_us"] = r.topology.nvlinkLatencyUs;
    o["topology"] = std::move(topo);
    o["tensors"] = r.tensors;
    o["pieces"] = r.pieces;
    o["plan"] = figuresJson(p, perRank);
    o["network_bytes"] = p.bytes[kNetwork];
    o["lower_bound_network_bytes"] = r.bounds.networkBytes;
    o["busiest_nic_bytes"] = busiest;
    o["lower_bound_busiest_nic_bytes"] = r.bounds.perNicBytes;
    o["estimated_seconds"] = p.estimatedSeconds;
    o["lower_bound_seconds"] = r.bounds.seconds;
    llvm::json::Object baselines;
    baselines["direct"] = figuresJson(r.direct, false);
    baselines["gather-broadcast"] = figuresJson(r.gatherBroadcast, false);
    o["baselines"] = std::move(baselines);
    llvm::json::Object ratios;
    ratios["network_bytes_over_lower_bound"] =
        ratioJson(p.bytes[kNetwork], r.bounds.networkBytes);
    ratios["busiest_nic_over_lower_bound"] =
        ratioJson(busiest, r.bounds.perNicBytes);
    ratios["estimated_over_lower_bound_seconds"] =
        ratioJson(p.estimatedSeconds, r.bounds.seconds);
    ratios["speedup_over_direct"] =
        ratioJson(r.direct.estimatedSeconds, p.estimatedSeconds);
    ratios["speedup_over_gather_broadcast"] =
        ratioJson(r.gatherBroadcast.estimatedSeconds, p.estimatedSeconds);
    o["ratios"] = std::move(ratios);
    os << formatv("{0:2}", llvm::json::Value(std::move(o))) << "\n";
    return;
  }
  os << formatv("reshard report: {0} tensors, {1} pieces\n", r.tensors,
                r.pieces);
  if (r.hasTopology)
    os << formatv("topology: {0} GPUs/node, NVLink domains of {1}, NIC {2} "
                  "GB/s, NVLink {3} GB/s per GPU\n",
                  r.topology.gpusPerNode, r.topology.nvlDomainSize,
                  r.topology.nicGBps, r.topology.nvlinkGBps);
  else
    os << "topology: none (every rank its own domain, default link speeds)\n";
  os << formatv("{0,-18} {1,16} {2,16} {3,16} {4,16} {5,6} {6,12}\n", "plan",
                "network B", "nvlink B", "local B", "busiest NIC B", "steps",
                "est. s");
  auto row = [&](const char *name, const PlanFigures &f) {
    os << formatv("{0,-18} {1,16} {2,16} {3,16} {4,16} {5,6} {6,12:e}\n", name,
                  f.bytes[kNetwork], f.bytes[kNVLink], f.bytes[kLocal],
                  std::max(f.busiestNicOutBytes, f.busiestNicInBytes), f.steps,
                  f.estimatedSeconds);
  };
  row("reshard", p);
  row("direct", r.direct);
  row("gather-broadcast", r.gatherBroadcast);
  os << formatv("{0,-18} {1,16} {2,16} {3,16} {4,16} {5,6} {6,12:e}\n",
                "lower bound", r.bounds.networkBytes, "", "",
                r.bounds.perNicBytes, "", r.bounds.seconds);
  os << "network bytes / lower bound: "
     << ratioText(p.bytes[kNetwork], r.bounds.networkBytes, "%.3f")
     << "; busiest NIC / bound: "
     << ratioText(busiest, r.bounds.perNicBytes, "%.3f")
     << "; estimated / lower-bound time: "
     << ratioText(p.estimatedSeconds, r.bounds.seconds, "%.3f") << "\n";
  os << "speedup: "
     << ratioText(r.direct.estimatedSeconds, p.estimatedSeconds, "%.2f")
     << "x over direct, "
     << ratioText(r.gatherBroadcast.estimatedSeconds, p.estimatedSeconds,
                  "%.2f")
     << "x over gather-broadcast\n";
  if (!perRank)
    return;
  os << formatv("{0,8} {1,14} {2,14} {3,14} {4,14} {5,14} {6,10}\n", "rank",
                "local B", "nvlink out B", "nvlink in B", "net out B",
                "net in B", "net msgs");
  for (auto &[rank, f] : p.perRank)
    os << formatv("{0,8} {1,14} {2,14} {3,14} {4,14} {5,14} {6,10}\n", rank,
                  f.bytesOut[kLocal], f.bytesOut[kNVLink], f.bytesIn[kNVLink],
                  f.bytesOut[kNetwork], f.bytesIn[kNetwork],
                  f.messagesOut[kNetwork] + f.messagesIn[kNetwork]);
}
