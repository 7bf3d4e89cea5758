//===- CostModel.cpp - Bytes per link, bounds, estimated time -------------===//
#include "reshard/Plan/CostModel.h"

#include "reshard/Plan/Scheduling.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>
#include <set>

using namespace reshard;
using llvm::formatv;

namespace {
/// Link parameters of the plan's topology (defaults without one).
struct Links {
  std::optional<TopologySpec> topo;
  TopologySpec spec;
  explicit Links(const std::optional<TopologySpec> &topology) : topo(topology) {
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

/// Bytes per NIC when `bytes` spread over `nics` (at least one).
int64_t ceilDiv(int64_t bytes, int64_t nics) {
  return llvm::divideCeilSigned(bytes, std::max<int64_t>(nics, 1));
}

double seconds(int64_t bytes, double gbps, double latencyUs) {
  if (!bytes)
    return 0;
  return latencyUs * 1e-6 + static_cast<double>(bytes) / (gbps * 1e9);
}
} // namespace

namespace {
/// The links of a rank: NIC out, NIC in, NVLink out, NVLink in, local.
enum RankLink { kNicOut, kNicIn, kNvlOut, kNvlIn, kCopy, kNumRankLinks };
using RankLoad = std::array<int64_t, kNumRankLinks>;
} // namespace

// Loads are piecewise constant over steps (a stream moves its quota every
// step), so they are kept as changes per (step, rank) and swept once: the
// cost does not grow with streams times steps, and streams that start and
// end together (one pace) share their changes.
struct FigureBuilder::State {
  explicit State(const std::optional<TopologySpec> &topology)
      : links(topology) {}
  Links links;
  PlanFigures figures;
  llvm::DenseMap<int64_t, RankFigures> perRank;
  llvm::DenseMap<std::pair<int64_t, int64_t>, RankLoad> changes;
  RankFigures &figuresOf(int64_t rank) { return perRank[rank]; }
  void change(int64_t step, int64_t rank, int link, int64_t delta) {
    if (delta)
      changes.try_emplace({step, rank}, RankLoad{}).first->second[link] +=
          delta;
  }
};

FigureBuilder::FigureBuilder(const std::optional<TopologySpec> &topology)
    : state(std::make_unique<State>(topology)) {}
FigureBuilder::~FigureBuilder() = default;

void FigureBuilder::addSteps(int64_t begin, int64_t end, int64_t from,
                             int64_t to, int64_t perStep, int64_t last,
                             int64_t messages) {
  if (end <= begin)
    return;
  PlanFigures &f = state->figures;
  LinkClass c = state->links.classOf(from, to);
  int64_t bytes = perStep * (end - begin - 1) + last;
  f.bytes[c] += bytes;
  f.messages[c] += messages;
  RankFigures &out = state->figuresOf(from);
  out.bytesOut[c] += bytes;
  out.messagesOut[c] += messages;
  auto change = [&](int64_t rank, int link) {
    state->change(begin, rank, link, perStep);
    state->change(end - 1, rank, link, last - perStep);
    state->change(end, rank, link, -last);
  };
  if (c == kLocal) {
    change(from, kCopy);
    return;
  }
  RankFigures &in = state->figuresOf(to);
  in.bytesIn[c] += bytes;
  in.messagesIn[c] += messages;
  change(from, c == kNetwork ? kNicOut : kNvlOut);
  change(to, c == kNetwork ? kNicIn : kNvlIn);
}

PlanFigures FigureBuilder::finish() {
  PlanFigures &f = state->figures;
  const TopologySpec &spec = state->links.spec;
  std::vector<std::pair<std::pair<int64_t, int64_t>, RankLoad>> changes(
      state->changes.begin(), state->changes.end());
  llvm::sort(changes,
             [](const auto &a, const auto &b) { return a.first < b.first; });
  // Sweep the steps: each rank's time in a step is its slowest link; a
  // step lasts as long as its slowest rank.
  llvm::DenseMap<int64_t, RankLoad> load;
  llvm::DenseMap<int64_t, double> rankTime;
  std::multiset<double> times;
  auto timeOf = [&](const RankLoad &l) {
    return std::max({seconds(l[kNicOut], spec.nicGBps, spec.nicLatencyUs),
                     seconds(l[kNicIn], spec.nicGBps, spec.nicLatencyUs),
                     seconds(l[kNvlOut], spec.nvlinkGBps, spec.nvlinkLatencyUs),
                     seconds(l[kNvlIn], spec.nvlinkGBps, spec.nvlinkLatencyUs),
                     seconds(l[kCopy], spec.nvlinkGBps, 0)});
  };
  for (size_t i = 0; i < changes.size();) {
    int64_t step = changes[i].first.first;
    for (; i < changes.size() && changes[i].first.first == step; ++i) {
      int64_t rank = changes[i].first.second;
      RankLoad &l = load[rank];
      for (int k = 0; k < kNumRankLinks; ++k)
        l[k] += changes[i].second[k];
      auto [it, fresh] = rankTime.try_emplace(rank, 0.0);
      if (!fresh)
        times.erase(times.find(it->second));
      it->second = timeOf(l);
      times.insert(it->second);
    }
    if (i == changes.size())
      break;
    double slowest = times.empty() ? 0 : *times.rbegin();
    if (slowest > 0) {
      int64_t steps = changes[i].first.first - step;
      f.estimatedSeconds += slowest * steps;
      f.steps += steps;
    }
  }
  for (auto &[rank, r] : state->perRank)
    f.perRank.emplace(rank, r);
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
  return std::move(f);
}

/// The members of a transfer the runtime moves: all but the scales of a
/// tensor quantized on its receivers, an identity that the receivers'
/// quantizer writes and no copy moves.
static int64_t movedMembers(const PlanModel &model, const TransferGroup &t) {
  if (model.tensorQuant.empty() || t.kind != TransferKind::Copy)
    return t.memberCount;
  const PlanGroup &g = model.groups[t.group];
  int64_t n = 0;
  for (int64_t i = 0; i < t.memberCount; ++i) {
    const TensorQuant &q =
        model.tensorQuant[g.members[t.memberStart + i * t.memberStride]];
    n += !(q.role == TensorQuant::Scales && q.onReceiver);
  }
  return n;
}

/// The plan's own traffic: its local copies in step 0, then every stream's
/// slice in each step it runs, one message per step and peer (the engine
/// sends all of a pair's streams active in a step, phase 0 and relay lanes,
/// in one message).
PlanFigures reshard::planFigures(const PlanModel &model,
                                 const std::vector<TransferGroup> &transfers,
                                 const std::vector<StreamContent> &streams,
                                 const PlanSchedule &schedule) {
  FigureBuilder b(model.topology);
  for (const TransferGroup &t : transfers)
    if (int64_t n = t.kind == TransferKind::Copy ? movedMembers(model, t) : 0)
      b.add(0, t.sender, t.sender, n * model.pieceBytes(t.group, t.piece), n);
  // `streams` is sorted by (sender, receiver, phase): a pair's streams are
  // consecutive. `covered` holds the steps its earlier streams run in.
  int64_t lastSender = -1, lastReceiver = -1;
  std::vector<std::pair<int64_t, int64_t>> covered;
  for (const StreamContent &s : streams) {
    const PlanStream *p = schedule.find(s.sender, s.receiver, s.phase);
    int64_t start = isRelay(s.phase) || isTransitOut(s.phase) ? 1 : 0;
    int64_t quota = s.bytes;
    if (p) {
      start = p->start;
      quota = p->quota;
    }
    int64_t steps = streamSteps(s.bytes, quota), end = start + steps;
    if (s.sender != lastSender || s.receiver != lastReceiver)
      covered.clear();
    // Steps of this stream that an earlier stream of the pair already
    // sends a message in (`covered` stays disjoint).
    int64_t shared = 0;
    for (auto [lo, hi] : covered)
      shared += std::max<int64_t>(0, std::min(end, hi) - std::max(start, lo));
    if (steps)
      b.addSteps(start, end, s.sender, s.receiver, quota,
                 s.bytes - quota * (steps - 1), steps - shared);
    // Add [start, end) minus what is covered, as disjoint pieces.
    std::vector<std::pair<int64_t, int64_t>> merged;
    int64_t lo = start, hi = end;
    for (auto [a, z] : covered) {
      if (z < lo || a > hi) {
        merged.push_back({a, z});
        continue;
      }
      lo = std::min(lo, a);
      hi = std::max(hi, z);
    }
    if (hi > lo)
      merged.push_back({lo, hi});
    covered = std::move(merged);
    lastSender = s.sender;
    lastReceiver = s.receiver;
  }
  return b.finish();
}

/// Calls fn(deliveries, bytes of all members, members) for every piece of
/// every group.
template <typename Fn>
static void forEachGroupPiece(const PlanModel &model, Fn fn) {
  for (size_t g = 0; g < model.groups.size(); ++g) {
    int64_t members = model.groups[g].numMembers();
    const ClassPattern &pattern = model.classes[model.groups[g].cls].pattern;
    for (size_t j = 0; j < pattern.size(); ++j)
      fn(deliveriesOf(model, g, j), model.pieceBytes(g, j) * members, members);
  }
}

/// Adds traffic with one message per (step, sender, receiver) however
/// many pieces it carries; `pieces` counts local copies.
class PairMessages {
public:
  explicit PairMessages(FigureBuilder &b) : b(b) {}
  void add(int64_t step, int64_t from, int64_t to, int64_t bytes,
           int64_t pieces) {
    if (from == to) {
      b.add(step, from, to, bytes, pieces);
      return;
    }
    bool first = seen.insert({step, from, to}).second;
    b.add(step, from, to, bytes, first ? 1 : 0);
  }

private:
  FigureBuilder &b;
  llvm::DenseSet<std::tuple<int64_t, int64_t, int64_t>> seen;
};

/// The `direct` baseline: a local copy or the lowest holder, one step.
static PlanFigures directFigures(const PlanModel &model) {
  FigureBuilder b(model.topology);
  PairMessages out(b);
  forEachGroupPiece(model, [&](const PieceDeliveries &d, int64_t bytes,
                               int64_t members) {
    for (const PieceDeliveries::Replica &r : d.replicas) {
      bool local = r.kind == PieceDeliveries::Kind::Local;
      out.add(0, local ? r.rank : d.holders.front(), r.rank, bytes, members);
    }
  });
  return b.finish();
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
/// rank (step 1), which keeps its shard. The tensors of a group do the
/// same, so each group is worked out once.
static PlanFigures gatherBroadcastFigures(const PlanModel &model) {
  FigureBuilder b(model.topology);
  PairMessages out(b);
  for (size_t g = 0; g < model.groups.size(); ++g) {
    int64_t members = model.groups[g].numMembers();
    TensorLayout l = model.layoutOf(model.groups[g].members.front());
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
      out.add(0, rank, root, bytes * members, members);
    }
    ShardGeometry dst = l.dstGeometry();
    for (size_t i = 0; i < l.dst.mesh.ranks.size(); ++i) {
      int64_t rank = l.dst.mesh.ranks[i];
      int64_t bytes =
          rank == root
              ? dst.localNumElements(l.dst.mesh.coords(i)) * l.elementBytes
              : full;
      out.add(1, root, rank, bytes * members, members);
    }
  }
  return b.finish();
}

/// The physical lower bound (docs/CostModel.md): any GPU of a domain may
/// take data in from the network or send it out for a peer, so a domain's
/// traffic spreads over the NICs of all its plan GPUs at best.
static PlanBounds computeBounds(const PlanModel &model, const Links &links) {
  PlanBounds b;
  llvm::DenseMap<int64_t, int64_t> ingress, egress, nonLocalIn;
  forEachGroupPiece(model, [&](const PieceDeliveries &d, int64_t bytes,
                               int64_t) {
    for (const PieceDeliveries::Replica &r : d.replicas)
      if (r.kind != PieceDeliveries::Kind::Local)
        nonLocalIn[r.rank] += bytes;
    for (const PieceDeliveries::Domain &dom : d.networkDomains) {
      b.networkBytes += bytes;
      ingress[dom.domain] += bytes;
    }
    // Held in one domain only and needed elsewhere: it leaves that domain
    // at least once (further domains may get it from the first).
    int64_t home = links.domainOf(d.holders.front());
    if (!d.networkDomains.empty() && llvm::all_of(d.holders, [&](int64_t h) {
          return links.domainOf(h) == home;
        }))
      egress[home] += bytes;
  });
  std::vector<int64_t> planGpus = model.planRanks();
  llvm::DenseMap<int64_t, int64_t> domainGpus;
  for (int64_t r : planGpus)
    ++domainGpus[links.domainOf(r)];
  const TopologySpec &s = links.spec;
  auto nicTerm = [&](int64_t bytes, int64_t where, int64_t gpus) {
    BoundTerm t{bytes, where, gpus, 0};
    t.seconds = seconds(ceilDiv(bytes, gpus), s.nicGBps, s.nicLatencyUs);
    return t;
  };
  auto busiest = [&](const llvm::DenseMap<int64_t, int64_t> &perDomain) {
    BoundTerm best;
    for (auto &[domain, bytes] : perDomain) {
      BoundTerm t = nicTerm(bytes, domain, domainGpus.lookup(domain));
      if (t.seconds > best.seconds ||
          (t.seconds == best.seconds && t.bytes && domain < best.where))
        best = t;
    }
    return best;
  };
  b.domainIngress = busiest(ingress);
  b.domainEgress = busiest(egress);
  b.allNetwork = nicTerm(b.networkBytes, -1, planGpus.size());
  // A GPU takes what it lacks through its NIC and its NVLink at best, and
  // pays at least the smaller latency.
  double minLatency = std::min(s.nicLatencyUs, s.nvlinkLatencyUs) * 1e-6;
  for (auto &[rank, bytes] : nonLocalIn) {
    double t = minLatency +
               static_cast<double>(bytes) / ((s.nicGBps + s.nvlinkGBps) * 1e9);
    if (bytes && (t > b.gpuReceive.seconds ||
                  (t == b.gpuReceive.seconds && rank < b.gpuReceive.where)))
      b.gpuReceive = BoundTerm{bytes, rank, 1, t};
  }
  std::pair<const char *, const BoundTerm *> terms[] = {
      {"domain_ingress", &b.domainIngress},
      {"domain_egress", &b.domainEgress},
      {"all_network", &b.allNetwork},
      {"gpu_receive", &b.gpuReceive}};
  for (auto [name, t] : terms) {
    if (t != &b.gpuReceive && t->gpus)
      b.perNicBytes = std::max(b.perNicBytes, ceilDiv(t->bytes, t->gpus));
    if (t->seconds > b.seconds) {
      b.seconds = t->seconds;
      b.binding = name;
    }
  }
  return b;
}

PlanBounds reshard::physicalBounds(const PlanModel &model) {
  return computeBounds(model, Links(model.topology));
}

PlanReport reshard::buildReport(const PlanModel &model) {
  std::vector<TransferGroup> transfers = enumerateTransfers(model);
  return buildReport(model, transfers, collectStreams(model, transfers));
}

PlanReport reshard::buildReport(const PlanModel &model,
                                const std::vector<TransferGroup> &transfers,
                                const std::vector<StreamContent> &streams) {
  PlanReport r;
  Links links(model.topology);
  r.hasTopology = links.topo.has_value();
  r.topology = links.spec;
  r.tensors = model.numTensors();
  r.classes = model.classes.size();
  r.groups = model.groups.size();
  if (model.groups.empty())
    return r;
  for (const PlanGroup &g : model.groups) {
    MeshAxisSplit dst(model.classes[g.cls].exemplar.dst.mesh.shape,
                      model.classes[g.cls].exemplar.dst.sharding);
    r.pieces += static_cast<int64_t>(model.classes[g.cls].pattern.size()) *
                dst.numReplicas() * g.numMembers();
  }
  r.plan = planFigures(model, transfers, streams, scheduleOf(model, streams));
  r.relayLanes = model.relayLanes;
  r.relayLaneSpan = model.relayLanes ? model.relayLaneSpan : 1;
  for (size_t g = 0; g < model.groups.size(); ++g)
    for (const RouteRow &route : model.groups[g].routes)
      if (route.feeder >= 0) {
        ++r.fedCrossings;
        r.fedBytes +=
            model.pieceBytes(g, route.piece) * model.groups[g].numMembers();
      }
  for (const PlanTransit &t : model.transits)
    ++(model.domainOf(t.via) == model.domainOf(t.receiver)
           ? r.transits.entering
           : r.transits.leaving);
  for (const StreamContent &s : streams)
    if (isTransitIn(s.phase))
      r.transits.bytes += s.bytes;
  r.classRoutes.resize(model.classes.size());
  for (size_t t = model.numTensors(); t-- > 0;) {
    PlanReport::ClassRoutes &c =
        r.classRoutes[model.groups[model.tensorGroup[t]].cls];
    ++c.tensors;
    c.example = model.tensorNames[t];
  }
  for (const TransferGroup &t : transfers) {
    bool within = model.domainOf(t.sender) == model.domainOf(t.receiver);
    PlanReport::Route route =
        t.kind == TransferKind::Copy ? PlanReport::kByCopy
        : t.kind == TransferKind::Relay
            ? (within ? PlanReport::kByRelay : PlanReport::kByTree)
        : within ? PlanReport::kByNVLink
        : !model.transits.empty() && model.transitVia(t.sender, t.receiver) >= 0
            ? PlanReport::kByTransit
            : PlanReport::kByNetwork;
    r.classRoutes[model.groups[t.group].cls].bytes[route] +=
        movedMembers(model, t) * model.pieceBytes(t.group, t.piece);
  }
  r.direct = directFigures(model);
  r.gatherBroadcast = gatherBroadcastFigures(model);
  r.bounds = computeBounds(model, links);
  for (size_t t = 0; t < model.tensorQuant.size(); ++t) {
    const TensorQuant &q = model.tensorQuant[t];
    if (q.role != TensorQuant::Payload)
      continue;
    auto bytesOf = [&](int64_t tensor) {
      TensorLayout l = model.layoutOf(tensor);
      return l.shardBytes(l.shape);
    };
    TensorLayout payload = model.layoutOf(t);
    PlanReport::Quantized e;
    e.name = model.tensorNames[t];
    e.quant = payload.dst.sharding.quant.str();
    e.onReceiver = q.onReceiver;
    e.payloadBytes = payload.shardBytes(payload.shape) / payload.elementBytes;
    e.scaleBytes = q.partner >= 0 ? bytesOf(q.partner) : 0;
    e.fullPrecisionBytes = q.fullPrecisionBytes;
    e.movedBytes =
        q.onReceiver ? e.fullPrecisionBytes : e.payloadBytes + e.scaleBytes;
    PlanReport::Quantized &sum = r.quantizedTotal;
    sum.payloadBytes += e.payloadBytes;
    sum.scaleBytes += e.scaleBytes;
    sum.fullPrecisionBytes += e.fullPrecisionBytes;
    sum.movedBytes += e.movedBytes;
    sum.onReceivers += e.onReceiver;
    r.quantized.push_back(std::move(e));
  }
  return r;
}

std::string PlanReport::ClassRoutes::algorithm() const {
  std::string name = bytes[kByTree]                           ? "relay tree"
                     : bytes[kByNetwork] || bytes[kByTransit] ? "direct"
                     : bytes[kByNVLink] || bytes[kByRelay]    ? "nvlink"
                     : bytes[kByCopy]                         ? "copy"
                                                              : "none";
  return bytes[kByTransit] ? name + " + transits" : name;
}

static const char *kClassNames[] = {"local", "nvlink", "network"};
static const char *kRouteNames[] = {"copy",    "nvlink",  "network",
                                    "transit", "relayed", "relay_tree"};
static_assert(std::size(kRouteNames) == PlanReport::kNumRoutes);

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

static llvm::json::Object boundTermsJson(const PlanBounds &b) {
  llvm::json::Object o;
  auto term = [](const BoundTerm &t, const char *whereKey) {
    llvm::json::Object j;
    j["bytes"] = t.bytes;
    if (whereKey)
      j[whereKey] = t.where;
    j["gpus"] = t.gpus;
    j["seconds"] = t.seconds;
    return j;
  };
  o["domain_ingress"] = term(b.domainIngress, "domain");
  o["domain_egress"] = term(b.domainEgress, "domain");
  o["gpu_receive"] = term(b.gpuReceive, "rank");
  o["all_network"] = term(b.allNetwork, nullptr);
  return o;
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
    o["classes"] = r.classes;
    o["groups"] = r.groups;
    o["pieces"] = r.pieces;
    o["relay_lanes"] = r.relayLanes;
    o["relay_lane_span"] = r.relayLaneSpan;
    llvm::json::Object transits;
    transits["entering"] = r.transits.entering;
    transits["leaving"] = r.transits.leaving;
    transits["bytes"] = r.transits.bytes;
    o["transits"] = std::move(transits);
    llvm::json::Object tree;
    tree["fed_crossings"] = r.fedCrossings;
    tree["fed_bytes"] = r.fedBytes;
    o["relay_tree"] = std::move(tree);
    o["plan"] = figuresJson(p, perRank);
    o["network_bytes"] = p.bytes[kNetwork];
    o["lower_bound_network_bytes"] = r.bounds.networkBytes;
    o["busiest_nic_bytes"] = busiest;
    o["lower_bound_busiest_nic_bytes"] = r.bounds.perNicBytes;
    o["estimated_seconds"] = p.estimatedSeconds;
    o["lower_bound_seconds"] = r.bounds.seconds;
    o["lower_bound_term"] = r.bounds.binding;
    o["lower_bound_terms"] = boundTermsJson(r.bounds);
    // The baselines' figures as the plan's, with their ratios to the same
    // bounds.
    llvm::json::Object baselines;
    for (auto [name, f] :
         {std::pair<const char *, const PlanFigures *>{"direct", &r.direct},
          {"gather-broadcast", &r.gatherBroadcast}}) {
      llvm::json::Object b = figuresJson(*f, perRank);
      b["ratios"] = llvm::json::Object{
          {"network_bytes_over_lower_bound",
           ratioJson(f->bytes[kNetwork], r.bounds.networkBytes)},
          {"busiest_nic_over_lower_bound",
           ratioJson(std::max(f->busiestNicOutBytes, f->busiestNicInBytes),
                     r.bounds.perNicBytes)},
          {"estimated_over_lower_bound_seconds",
           ratioJson(f->estimatedSeconds, r.bounds.seconds)}};
      baselines[name] = std::move(b);
    }
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
    if (!r.quantized.empty()) {
      llvm::json::Array tensors;
      for (const PlanReport::Quantized &q : r.quantized)
        tensors.push_back(llvm::json::Object{
            {"name", q.name},
            {"quant", q.quant},
            {"quantize_on", q.onReceiver ? "receiver" : "sender"},
            {"payload_bytes", q.payloadBytes},
            {"scale_bytes", q.scaleBytes},
            {"full_precision_bytes", q.fullPrecisionBytes},
            {"moved_bytes", q.movedBytes}});
      const PlanReport::Quantized &sum = r.quantizedTotal;
      o["quantized"] = llvm::json::Object{
          {"tensors", std::move(tensors)},
          {"on_sender", int64_t(r.quantized.size()) - sum.onReceivers},
          {"on_receiver", sum.onReceivers},
          {"payload_bytes", sum.payloadBytes},
          {"scale_bytes", sum.scaleBytes},
          {"full_precision_bytes", sum.fullPrecisionBytes},
          {"moved_bytes", sum.movedBytes}};
    }
    llvm::json::Array routes;
    for (auto [c, cr] : llvm::enumerate(r.classRoutes)) {
      llvm::json::Object e{{"class", int64_t(c)},
                           {"tensors", cr.tensors},
                           {"example", cr.example},
                           {"algorithm", cr.algorithm()}};
      for (int k = 0; k < PlanReport::kNumRoutes; ++k)
        e[kRouteNames[k]] = cr.bytes[k];
      routes.push_back(std::move(e));
    }
    o["class_routes"] = std::move(routes);
    os << formatv("{0:2}", llvm::json::Value(std::move(o))) << "\n";
    return;
  }
  os << formatv("reshard report: {0} tensors, {1} pieces ({2} classes, {3} "
                "groups)\n",
                r.tensors, r.pieces, r.classes, r.groups);
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
  const PlanBounds &b = r.bounds;
  auto term = [&](const BoundTerm &t, const char *where) -> std::string {
    if (!t.bytes)
      return "none";
    std::string at = t.where < 0 ? std::string()
                                 : formatv("{0} {1}, ", where, t.where).str();
    std::string over =
        t.where >= 0 && llvm::StringRef(where) == "rank"
            ? std::string("NIC + NVLink")
            : formatv("{0} NIC{1}", t.gpus, t.gpus == 1 ? "" : "s").str();
    return formatv("{0:e} s ({1}{2} B over {3})", t.seconds, at, t.bytes, over);
  };
  os << "bound terms: domain ingress " << term(b.domainIngress, "domain")
     << "; domain egress " << term(b.domainEgress, "domain") << "; all network "
     << term(b.allNetwork, "") << "; GPU receive " << term(b.gpuReceive, "rank")
     << "; binding: " << b.binding << "\n";
  os << "speedup: "
     << ratioText(r.direct.estimatedSeconds, p.estimatedSeconds, "%.2f")
     << "x over direct, "
     << ratioText(r.gatherBroadcast.estimatedSeconds, p.estimatedSeconds,
                  "%.2f")
     << "x over gather-broadcast\n";
  if (r.relayLanes && r.relayLaneSpan == 1)
    os << "relay lanes: each relay forwards what each holder sent it in a "
          "stream of its own (reshard-schedule chose them by the cost "
          "model)\n";
  else if (r.relayLanes)
    os << formatv("relay lanes: each relay forwards what the holders of "
                  "each block of {0} ranks sent it in a stream of its own "
                  "(reshard-select-sources widened them from one per holder "
                  "to keep the plan within relay-tree-max-streams)\n",
                  r.relayLaneSpan);
  if (r.fedCrossings)
    os << formatv("relay tree: {0} crossings of a piece into a domain come "
                  "from another domain's entries, {1} B\n",
                  r.fedCrossings, r.fedBytes);
  if (r.transits.entering + r.transits.leaving)
    os << formatv("transits: {0} holder streams enter their receiver's "
                  "domain and {1} leave their sender's through another GPU "
                  "of it, {2} B (chosen by reshard-schedule)\n",
                  r.transits.entering, r.transits.leaving, r.transits.bytes);
  if (!r.quantized.empty()) {
    const PlanReport::Quantized &q = r.quantizedTotal;
    os << formatv(
        "quantized: {0} tensors on the sender, {1} on the receiver; {2} B of "
        "FP8 payload + {3} B of scales from {4} B; one copy of each moves "
        "{5} B ({6} of the full precision)\n",
        r.quantized.size() - q.onReceivers, q.onReceivers, q.payloadBytes,
        q.scaleBytes, q.fullPrecisionBytes, q.movedBytes,
        ratioText(q.movedBytes, q.fullPrecisionBytes, "%.3f"));
    // Per tensor: the first few of each side (the JSON report has all).
    const size_t kListed = 8;
    for (bool receiver : {false, true}) {
      size_t n = receiver ? q.onReceivers : r.quantized.size() - q.onReceivers;
      if (!n)
        continue;
      os << (receiver ? "  on the receiver (a source shard cuts a block): "
                      : "  on the sender: ");
      size_t listed = 0;
      for (const PlanReport::Quantized &t : r.quantized) {
        if (t.onReceiver != receiver || listed == kListed)
          continue;
        os << (listed++ ? ", " : "")
           << formatv("{0} ({1} B moved of {2} B)", t.name, t.movedBytes,
                      t.fullPrecisionBytes);
      }
      if (n > listed)
        os << formatv(", and {0} more", n - listed);
      os << "\n";
    }
  }
  // Routes per class, in bytes that reach destinations.
  os << "routes per class (B reaching destinations: local copy, NVLink "
        "from a holder, network from a holder, through a transit, relayed "
        "by the domain's entry, from another domain's entry) and the "
        "algorithm that makes them:\n";
  const char *classRow =
      "{0,6} {1,8} {2,14} {3,14} {4,14} {5,14} {6,14} {7,14}  {8,-22}  {9}\n";
  os << formatv(classRow, "class", "tensors", "copy", "nvlink", "network",
                "transit", "relayed", "relay tree", "algorithm", "e.g.");
  for (auto [c, cr] : llvm::enumerate(r.classRoutes))
    os << formatv(
        classRow, c, cr.tensors, cr.bytes[PlanReport::kByCopy],
        cr.bytes[PlanReport::kByNVLink], cr.bytes[PlanReport::kByNetwork],
        cr.bytes[PlanReport::kByTransit], cr.bytes[PlanReport::kByRelay],
        cr.bytes[PlanReport::kByTree], cr.algorithm(), cr.example);
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
