//===- FuzzPlanner.cpp - libFuzzer target: plan random layouts, run them --===//
//
// Bytes are decoded into a small plan: one to three tensors (0-D to 5-D,
// dims up to 12, blocks, storage and dim orders, several mesh axes on one
// dim, replication) moving between two meshes (up to 4-D, up to 16
// devices, ranks identical, overlapping or disjoint, sometimes near
// INT32_MAX) with an optional topology. Every decoded layout is valid, so
// the planner must succeed: buildPlanModel (classes and groups),
// selectSources (balanced or direct), schedulePlan with a small staging
// budget and operation bound; then every tensor's expanded pieces run on
// host buffers as `reshard-run --check` does. Any error string, wrong or
// unwritten element, broken schedule bound, or (balanced routing) network
// bytes above the lower bound aborts.
//
//===----------------------------------------------------------------------===//
#include "reshard/Plan/CostModel.h"
#include "reshard/Plan/Expansion.h"
#include "reshard/Plan/Intersection.h"
#include "reshard/Plan/Scheduling.h"
#include "reshard/Plan/SourceSelection.h"
#include "reshard/Plan/Transits.h"
#include "reshard/Reference/CheckPattern.h"
#include "reshard/Reference/PieceInterpreter.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

using namespace reshard;

namespace {

constexpr int64_t kMaxDevices = 16;
// Small enough for thousands of cases a second under the sanitizers; every
// split of the planner already shows at these sizes.
constexpr int64_t kMaxElements = 256;
// The staging budget is raised until what one rank may send fits in this
// many budgets: tiny budgets still split pieces and fill steps, without
// making thousands of one-element transfers per case.
constexpr int64_t kMaxBudgetsPerPlan = 64;

struct Case {
  MeshSpec src, dst;
  std::optional<TopologySpec> topology;
  std::vector<TensorLayout> tensors;
  SourceStrategy strategy = SourceStrategy::Balanced;
  bool schedule = true;
  /// Relays forward in lanes (PlanModel::relayLanes); reshard-schedule
  /// picks them by the cost model, the fuzzer either way.
  bool relayLanes = false;
  /// Holder streams through transit GPUs wherever balanceNics proposes
  /// them and the one-pace schedule fits (reshard-schedule transits=always).
  bool transits = false;
  /// Domains fed by other domains' entries wherever less loaded
  /// (reshard-select-sources relay-tree=always).
  bool relayTree = false;
  ScheduleOptions options;
};

std::string describe(const Case &c);

[[noreturn]] void fail(const Case &c, const std::string &what) {
  std::fprintf(stderr, "reshard-fuzz-planner: %s\n%s", what.c_str(),
               describe(c).c_str());
  std::abort();
}

std::string list(llvm::ArrayRef<int64_t> v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string meshText(const char *name, const MeshSpec &m) {
  std::string axes;
  for (size_t i = 0; i < m.axes.size(); ++i)
    axes += (i ? ", \"" : "\"") + m.axes[i] + "\"";
  return llvm::formatv("reshard.mesh @{0} shape = {1} axes = [{2}] ranks = "
                       "{3}\n",
                       name, list(m.shape), axes, list(m.ranks));
}

std::string shardingText(const MeshSpec &mesh, const Sharding &s) {
  std::string out = "<[";
  for (size_t d = 0; d < s.dims.size(); ++d) {
    out += d ? ", [" : "[";
    for (size_t j = 0; j < s.dims[d].axes.size(); ++j)
      out += (j ? ", " : "") + mesh.axes[s.dims[d].axes[j]];
    out += "]";
    if (!s.dims[d].order.empty()) {
      out += " order [";
      for (auto [k, r] : llvm::enumerate(s.dims[d].order))
        out += llvm::formatv("{0}[{1}, {2}]", k ? ", " : "", r.start, r.length)
                   .str();
      out += "]";
    }
    if (!s.dims[d].blocks.empty())
      out += " blocks " + list(s.dims[d].blocks);
  }
  out += "]";
  if (!s.dimOrder.empty())
    out += " dim_order " + list(s.dimOrder);
  return out + ">";
}

/// The case as reshard IR plus the pipeline, so that a finding replays
/// with the tools: reshard-opt case.mlir --pass-pipeline=... | reshard-run
/// - --check.
std::string describe(const Case &c) {
  std::string s;
  if (c.topology)
    s += llvm::formatv("reshard.topology @topo gpus_per_node = {0} "
                       "nvl_domain_size = {1} nvlink_GBps_per_gpu = 450.0 "
                       "nic_GBps_per_gpu = 50.0\n",
                       c.topology->gpusPerNode, c.topology->nvlDomainSize);
  s += meshText("src", c.src) + meshText("dst", c.dst);
  static const char *types[] = {"", "i8", "i16", "", "f32", "", "", "", "f64"};
  for (const TensorLayout &t : c.tensors) {
    std::string type = "tensor<";
    for (int64_t n : t.shape)
      type += std::to_string(n) + "x";
    type += std::string(types[t.elementBytes]) + ">";
    s += llvm::formatv("reshard.redistribute @{0} from @src {1} to @dst {2}{3}"
                       " : {4} -> {4}\n",
                       t.name, shardingText(c.src, t.src.sharding),
                       shardingText(c.dst, t.dst.sharding),
                       c.topology ? " topology @topo" : "", type);
  }
  s += llvm::formatv(
      "// pipeline: reshard-intersect,reshard-select-sources{{strategy={0}}",
      c.strategy == SourceStrategy::Balanced ? "balanced" : "direct");
  if (c.schedule)
    s += llvm::formatv(",reshard-schedule{{staging-budget={0} "
                       "max-ops-per-step={1}}",
                       c.options.stagingBudget, c.options.maxOpsPerStep);
  if (c.relayLanes)
    s += "\n// relay lanes (the pass chooses them by the cost model)";
  if (c.transits)
    s += "\n// transits=always";
  if (c.relayTree)
    s += "\n// relay-tree=always";
  return s + "\n";
}

/// Distinct ranks for `n` devices, each drawn from [0, 32).
llvm::SmallVector<int64_t> drawRanks(FuzzedDataProvider &in, int64_t n) {
  llvm::SmallVector<int64_t> ranks;
  std::set<int64_t> used;
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = in.ConsumeIntegralInRange<int64_t>(0, 31);
    while (used.count(r))
      r = (r + 1) % 32;
    used.insert(r);
    ranks.push_back(r);
  }
  return ranks;
}

MeshSpec drawMesh(FuzzedDataProvider &in) {
  MeshSpec m;
  int64_t n = 1;
  for (int i = 0, e = in.ConsumeIntegralInRange<int>(0, 4); i < e; ++i) {
    int64_t size = in.ConsumeIntegralInRange<int64_t>(1, 4);
    if (n * size > kMaxDevices)
      size = 1;
    n *= size;
    m.shape.push_back(size);
    m.axes.push_back("a" + std::to_string(i));
  }
  m.ranks = drawRanks(in, n);
  return m;
}

/// A sharding spec over `mesh` for `shape`: each mesh axis, in a drawn
/// order (major to minor), shards one dim or none; some dims get blocks.
ShardingSpec drawSharding(FuzzedDataProvider &in, const MeshSpec &mesh,
                          llvm::ArrayRef<int64_t> shape) {
  ShardingSpec spec;
  spec.dims.resize(shape.size());
  llvm::SmallVector<unsigned> order;
  for (unsigned a = 0; a < mesh.axes.size(); ++a)
    order.push_back(a);
  for (unsigned i = 0; i + 1 < order.size(); ++i)
    std::swap(order[i],
              order[in.ConsumeIntegralInRange<unsigned>(i, order.size() - 1)]);
  for (unsigned a : order) {
    // shape.size() means "replicated over this axis".
    size_t dim = in.ConsumeIntegralInRange<size_t>(0, shape.size());
    if (dim < shape.size())
      spec.dims[dim].axes.push_back(mesh.axes[a]);
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (in.ConsumeIntegralInRange<int>(0, 3) != 0)
      continue;
    int64_t left = shape[d];
    for (int b = 0, nb = in.ConsumeIntegralInRange<int>(1, 4); b + 1 < nb;
         ++b) {
      int64_t size = in.ConsumeIntegralInRange<int64_t>(0, left);
      spec.dims[d].blocks.push_back(size);
      left -= size;
    }
    spec.dims[d].blocks.push_back(left);
  }
  // Storage orders: the dim cut into runs, permuted, an empty run or not.
  for (size_t d = 0; d < shape.size(); ++d) {
    if (in.ConsumeIntegralInRange<int>(0, 3) != 0)
      continue;
    llvm::SmallVector<int64_t> cuts = {0, shape[d]};
    for (int k = 0, nk = in.ConsumeIntegralInRange<int>(0, 4); k < nk; ++k)
      cuts.push_back(in.ConsumeIntegralInRange<int64_t>(0, shape[d]));
    llvm::sort(cuts);
    llvm::SmallVector<OrderRun> &runs = spec.dims[d].order;
    for (size_t k = 0; k + 1 < cuts.size(); ++k)
      runs.push_back({cuts[k], cuts[k + 1] - cuts[k]});
    for (size_t i = 0; i + 1 < runs.size(); ++i)
      std::swap(runs[i],
                runs[in.ConsumeIntegralInRange<size_t>(i, runs.size() - 1)]);
    if (in.ConsumeBool())
      runs.push_back({in.ConsumeIntegralInRange<int64_t>(0, shape[d] + 2), 0});
  }
  // Now and then the buffers store their dims in another order.
  if (shape.size() >= 2 && in.ConsumeIntegralInRange<int>(0, 3) == 0) {
    for (size_t d = 0; d < shape.size(); ++d)
      spec.dimOrder.push_back(d);
    for (size_t i = 0; i + 1 < spec.dimOrder.size(); ++i)
      std::swap(spec.dimOrder[i],
                spec.dimOrder[in.ConsumeIntegralInRange<size_t>(
                    i, spec.dimOrder.size() - 1)]);
    spec.dimOrderGiven = true;
  }
  return spec;
}

Case decode(FuzzedDataProvider &in) {
  Case c;
  c.src = drawMesh(in);
  switch (in.ConsumeIntegralInRange<int>(0, 3)) {
  case 0: // the same mesh (in-place reshard)
    c.dst = c.src;
    break;
  case 1: { // the same devices in another shape or order, when it fits
    c.dst = drawMesh(in);
    if (c.dst.ranks.size() != c.src.ranks.size())
      break;
    llvm::SmallVector<size_t> order;
    for (size_t i = 0; i < c.dst.ranks.size(); ++i)
      order.push_back(i);
    llvm::sort(order, [&](size_t a, size_t b) {
      return c.dst.ranks[a] < c.dst.ranks[b];
    });
    for (size_t i = 0; i < order.size(); ++i)
      c.dst.ranks[order[i]] = c.src.ranks[i];
    break;
  }
  case 2: { // disjoint
    c.dst = drawMesh(in);
    for (int64_t &r : c.dst.ranks)
      r += 32;
    break;
  }
  default: // overlapping by chance
    c.dst = drawMesh(in);
    break;
  }
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) {
    // Ranks at the top of the legal range.
    for (MeshSpec *m : {&c.src, &c.dst})
      for (int64_t &r : m->ranks)
        r += kMaxRank - 63;
  }
  if (in.ConsumeBool()) {
    TopologySpec t;
    t.gpusPerNode = in.ConsumeIntegralInRange<int64_t>(1, 8);
    t.nvlDomainSize = t.gpusPerNode * in.ConsumeIntegralInRange<int64_t>(1, 4);
    c.topology = t;
  }
  c.strategy =
      in.ConsumeBool() ? SourceStrategy::Direct : SourceStrategy::Balanced;
  c.schedule = in.ConsumeIntegralInRange<int>(0, 3) != 0;
  c.options.stagingBudget = int64_t(8) << in.ConsumeIntegralInRange<int>(0, 10);
  c.options.maxOpsPerStep = in.ConsumeIntegralInRange<int64_t>(2, 9);

  static const int64_t elementBytes[] = {1, 2, 4, 8};
  for (int t = 0, nt = in.ConsumeIntegralInRange<int>(1, 3); t < nt; ++t) {
    TensorLayout l;
    l.name = "t" + std::to_string(t);
    int rank = in.ConsumeIntegralInRange<int>(0, 5);
    int64_t elements = 1;
    for (int d = 0; d < rank; ++d) {
      int64_t n = in.ConsumeIntegralInRange<int64_t>(1, 12);
      n = std::min(n, std::max<int64_t>(1, kMaxElements / elements));
      elements *= n;
      l.shape.push_back(n);
    }
    if (rank && in.ConsumeIntegralInRange<int>(0, 15) == 0)
      l.shape[in.ConsumeIntegralInRange<int>(0, rank - 1)] = 0;
    l.elementBytes = elementBytes[in.ConsumeIntegralInRange<int>(0, 3)];
    ShardingSpec srcSpec = drawSharding(in, c.src, l.shape);
    ShardingSpec dstSpec = drawSharding(in, c.dst, l.shape);
    l.src.mesh = c.src;
    l.dst.mesh = c.dst;
    // The layout checks the verifier runs; the decoder only makes valid
    // layouts, so a rejection is a finding too.
    std::string errors;
    auto collect = [&](llvm::Error err) {
      forEachLayoutError(std::move(err), [&](const LayoutError &e) {
        errors += e.getPath() + ": " + e.getMessage() + "\n";
      });
    };
    llvm::Expected<Sharding> src =
        resolveSharding(srcSpec, c.src.axes, l.shape, "src");
    llvm::Expected<Sharding> dst =
        resolveSharding(dstSpec, c.dst.axes, l.shape, "dst");
    collect(verifyMesh(c.src, "src"));
    collect(verifyMesh(c.dst, "dst"));
    if (c.topology)
      collect(verifyTopology(*c.topology, "topology"));
    collect(verifyTensorShape(l.shape, l.elementBytes, l.name));
    collect(src.takeError());
    collect(dst.takeError());
    bool valid = errors.empty();
    if (!valid) {
      c.tensors.push_back(l);
      fail(c, "the layout checks reject a valid layout:\n" + errors);
    }
    l.src.sharding = *src;
    l.dst.sharding = *dst;
    c.tensors.push_back(std::move(l));
  }
  // What one rank may have to send: every destination device's shard of
  // every tensor (a direct plan sends replicas from one holder).
  int64_t bytes = 0;
  for (const TensorLayout &l : c.tensors) {
    int64_t n = l.elementBytes * static_cast<int64_t>(l.dst.mesh.ranks.size());
    for (int64_t d : l.shape)
      n *= d;
    bytes += n;
  }
  while (bytes > kMaxBudgetsPerPlan * c.options.stagingBudget)
    c.options.stagingBudget *= 2;
  // Last, so that older inputs (false when the data has run out) decode as
  // they did.
  c.relayLanes = in.ConsumeBool();
  c.transits = in.ConsumeBool();
  c.relayTree = in.ConsumeBool();
  return c;
}

/// Holds the schedule to its promises: per rank and step, staging bytes
/// (sends plus receives plus a transit's carry) within the budget and distinct
/// peers within the operation bound; a relay sends each byte of a member in a
/// later step than that byte arrived in (byte by byte, at every step boundary
/// of the arrival, not by the linear bound the planner and the lowered plan's
/// verifier share).
void checkSchedule(const Case &c, const PlanModel &model,
                   const std::vector<TransferGroup> &transfers,
                   const PlanSchedule &schedule,
                   const std::vector<StreamContent> &streams) {
  struct Load {
    int64_t staging = 0;
    std::set<int64_t> sendPeers, recvPeers;
  };
  std::map<std::pair<int64_t, int64_t>, Load> loads; // (rank, step)
  // (rank, group, piece, member) -> the stream row that brings it and the
  // member's first byte in that stream.
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t>,
           std::pair<const PlanStream *, int64_t>>
      arrived;
  auto walk = [&](const StreamContent &sc, const PlanStream &row,
                  auto &&perMember) {
    int64_t at = 0;
    for (size_t t : sc.transfers) {
      const TransferGroup &x = transfers[t];
      int64_t pb = model.pieceBytes(x.group, x.piece);
      for (int64_t i = 0; i < x.memberCount; ++i, at += pb)
        perMember(x, x.memberStart + i * x.memberStride, at, pb);
    }
  };
  if (schedule.streams.size() != streams.size())
    fail(c, "the schedule does not have one row per stream");
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamContent &sc = streams[i];
    const PlanStream &row = schedule.streams[i];
    if (row.start < 0 || row.quota < 1)
      fail(c, llvm::formatv("stream {0} -> {1}: start {2}, quota {3}",
                            sc.sender, sc.receiver, row.start, row.quota));
    int64_t steps = streamSteps(sc.bytes, row.quota);
    for (int64_t k = 0; k < steps; ++k) {
      int64_t bytes = std::min(row.quota, sc.bytes - k * row.quota);
      Load &s = loads[{sc.sender, row.start + k}],
           &r = loads[{sc.receiver, row.start + k}];
      s.staging += bytes;
      r.staging += bytes;
      s.sendPeers.insert(sc.receiver);
      r.recvPeers.insert(sc.sender);
    }
    if (deliversToReceiver(sc.phase)) // what it may forward
      walk(sc, row,
           [&](const TransferGroup &x, int64_t k, int64_t at, int64_t) {
             arrived[{sc.receiver, x.group, x.piece, k}] = {&row, at};
           });
  }
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamContent &sc = streams[i];
    if (!isRelay(sc.phase)) // phase 1, or 1 + a lane (Transfers.h)
      continue;
    const PlanStream &out = schedule.streams[i];
    walk(sc, out,
         [&](const TransferGroup &x, int64_t k, int64_t at, int64_t bytes) {
           auto it = arrived.find({sc.sender, x.group, x.piece, k});
           if (it == arrived.end())
             return;
           const PlanStream &in = *it->second.first;
           int64_t inAt = it->second.second;
           // Within one arrival step the send step only grows, so the
           // first byte of each arrival step decides.
           for (int64_t b = 0; b < bytes;
                b = ((inAt + b) / in.quota + 1) * in.quota - inAt) {
             int64_t arrives = in.start + (inAt + b) / in.quota;
             int64_t sent = out.start + (at + b) / out.quota;
             if (sent <= arrives)
               fail(c, llvm::formatv("rank {0} relays byte {1} of member {2} "
                                     "of group {3} piece {4} in step {5}, "
                                     "but it arrives in step {6}",
                                     sc.sender, b, k, x.group, x.piece, sent,
                                     arrives));
           }
         });
  }
  // A transit forwards, one step later at the same quota, exactly what
  // it received (same transfers), and keeps one step of it meanwhile.
  std::map<int64_t, int64_t> kept;
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamContent &sc = streams[i];
    if (!isTransitIn(sc.phase))
      continue;
    int64_t receiver = sc.phase - kTransitInPhase;
    const PlanStream &in = schedule.streams[i];
    const PlanStream *out =
        schedule.find(sc.receiver, receiver, kTransitOutPhase + sc.sender);
    auto it = llvm::find_if(streams, [&](const StreamContent &o) {
      return o.sender == sc.receiver && o.receiver == receiver &&
             o.phase == kTransitOutPhase + sc.sender;
    });
    if (!out || it == streams.end() || it->transfers != sc.transfers ||
        out->quota != in.quota || out->start != in.start + 1)
      fail(c, llvm::formatv("the transit {0} -> {1} -> {2} does not forward "
                            "its stream one step later at its quota",
                            sc.sender, sc.receiver, receiver));
    kept[sc.receiver] += in.quota;
  }
  for (auto &[at, load] : loads) {
    load.staging += kept[at.first];
    if (load.staging > c.options.stagingBudget)
      fail(c, llvm::formatv("rank {0} stages {1} bytes in step {2}, over the "
                            "budget of {3}",
                            at.first, load.staging, at.second,
                            c.options.stagingBudget));
    int64_t ops = load.sendPeers.size() + load.recvPeers.size();
    if (ops > c.options.maxOpsPerStep)
      fail(c, llvm::formatv("rank {0} issues {1} operations in step {2}, over "
                            "the bound of {3}",
                            at.first, ops, at.second, c.options.maxOpsPerStep));
  }
}

/// Runs one tensor's explicit pieces on check buffers and compares the
/// result.
void execute(const Case &c, const TensorLayout &l, const PieceTable &table) {
  if (llvm::Error err = validatePieces(l, table))
    fail(c, llvm::formatv("tensor {0}: {1}", l.name,
                          llvm::toString(std::move(err))));
  ShardBuffers src = makeCheckBuffers(l, true);
  ShardBuffers dst = makeCheckBuffers(l, false);
  if (llvm::Error err = executePieces(l, table, src, dst))
    fail(c,
         "tensor " + l.name + ": execution: " + llvm::toString(std::move(err)));
  std::vector<Mismatch> wrong;
  if (int64_t bad = checkDestination(l, dst, wrong, 3)) {
    std::string s = llvm::formatv("tensor {0}: {1} destination elements wrong",
                                  l.name, bad);
    for (const Mismatch &m : wrong)
      s += llvm::formatv("; rank {0} local {1}: expected {2}, got {3}", m.rank,
                         m.localLinearIndex, m.expected, m.actual);
    fail(c, s);
  }
  // Exactly once: each destination rank's pieces add up to its shard.
  std::map<int64_t, int64_t> written;
  for (size_t i = 0; i < table.size(); ++i)
    written[table[i].dstRank()] += table[i].numElements();
  for (auto &[rank, shape] : l.localShapes(false)) {
    int64_t n = 1;
    for (int64_t e : shape)
      n *= e;
    if (written[rank] != n)
      fail(c, llvm::formatv("tensor {0}: rank {1}'s pieces write {2} "
                            "elements, its shard has {3}",
                            l.name, rank, written[rank], n));
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  FuzzedDataProvider in(data, size);
  Case c = decode(in);
  // RESHARD_FUZZ_DUMP=1 prints each case as IR (for replaying one input).
  static const bool dump = std::getenv("RESHARD_FUZZ_DUMP") != nullptr;
  if (dump)
    std::fprintf(stderr, "%s", describe(c).c_str());

  PlanModel model = buildPlanModel(c.tensors, c.topology);
  selectSources(model, c.strategy,
                c.relayTree ? RelayTree::Always : RelayTree::Never);
  model.relayLanes = c.relayLanes;
  if (c.schedule) {
    std::vector<TransferGroup> transfers = enumerateTransfers(model);
    std::vector<StreamContent> streams = collectStreams(model, transfers);
    llvm::Expected<PlanSchedule> schedule =
        schedulePlan(model, transfers, streams, c.options);
    if (!schedule)
      fail(c, "schedulePlan: " + llvm::toString(schedule.takeError()));
    if (c.transits) {
      // As reshard-schedule does: with the transits where they schedule.
      model.transits = balanceNics(model, streams);
      for (const PlanTransit &t : model.transits)
        if (model.domainOf(t.sender) == model.domainOf(t.receiver) ||
            (model.domainOf(t.via) != model.domainOf(t.sender) &&
             model.domainOf(t.via) != model.domainOf(t.receiver)))
          fail(c, llvm::formatv("balanceNics routes {0} -> {1} through {2}, "
                                "outside both domains",
                                t.sender, t.receiver, t.via));
      std::vector<StreamContent> through = collectStreams(model, transfers);
      llvm::Expected<PlanSchedule> s =
          schedulePlan(model, transfers, through, c.options);
      if (s && !model.transits.empty()) {
        streams = std::move(through);
        schedule = std::move(s);
      } else {
        if (!s)
          llvm::consumeError(s.takeError());
        model.transits.clear();
      }
    }
    orderRelays(model, transfers, *schedule, streams);
    checkSchedule(c, model, transfers, *schedule, streams);
    model.schedule = std::move(*schedule);
  }
  // The enumerating reference: every tensor's pieces as routed.
  for (size_t t = 0; t < model.numTensors(); ++t)
    execute(c, model.layoutOf(t), expandPieces(model, t));

  PlanReport report = buildReport(model);
  if (c.strategy == SourceStrategy::Balanced &&
      report.plan.bytes[kNetwork] != report.bounds.networkBytes)
    fail(c, llvm::formatv("balanced routing sends {0} network bytes, the "
                          "lower bound is {1}",
                          report.plan.bytes[kNetwork],
                          report.bounds.networkBytes));
  // No plan, baselines included, beats the physical lower bound.
  for (const PlanFigures *f :
       {&report.plan, &report.direct, &report.gatherBroadcast})
    if (std::max(f->busiestNicOutBytes, f->busiestNicInBytes) <
            report.bounds.perNicBytes ||
        f->estimatedSeconds < report.bounds.seconds * (1 - 1e-9))
      fail(c,
           llvm::formatv("a plan beats the lower bound: busiest NIC {0} B "
                         "(bound {1}), {2} s (bound {3}, {4})",
                         std::max(f->busiestNicOutBytes, f->busiestNicInBytes),
                         report.bounds.perNicBytes, f->estimatedSeconds,
                         report.bounds.seconds, report.bounds.binding));
  return 0;
}
