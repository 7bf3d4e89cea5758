//===- PlanModel.cpp - Classes, groups and the facts routing works from ---===//
#include "reshard/Plan/PlanModel.h"

#include "reshard/Plan/Intersection.h"

#include <algorithm>
#include <map>

using namespace reshard;

RouteRow PlanGroup::route(int64_t piece, RouteKind kind, int64_t key) const {
  RouteRow probe{piece, kind, key, 0, 0, -1};
  auto it = std::lower_bound(routes.begin(), routes.end(), probe);
  if (it != routes.end() && it->sameDecision(probe))
    return *it;
  return probe;
}

const PlanStream *PlanSchedule::find(int64_t sender, int64_t receiver,
                                     int64_t phase) const {
  PlanStream probe{sender, receiver, phase, 0, 0};
  auto it = std::lower_bound(streams.begin(), streams.end(), probe);
  if (it == streams.end() || it->sender != sender || it->receiver != receiver ||
      it->phase != phase)
    return nullptr;
  return &*it;
}

int64_t PlanModel::transitVia(int64_t sender, int64_t receiver) const {
  PlanTransit probe{sender, receiver, -1};
  auto it = std::lower_bound(transits.begin(), transits.end(), probe);
  if (it == transits.end() || it->sender != sender || it->receiver != receiver)
    return -1;
  return it->via;
}

TensorLayout PlanModel::layoutOf(int64_t tensor) const {
  const PlanGroup &g = groups[tensorGroup[tensor]];
  TensorLayout layout = classes[g.cls].exemplar;
  layout.name = tensorNames[tensor];
  layout.src.mesh = g.srcMesh;
  layout.dst.mesh = g.dstMesh;
  return layout;
}

int64_t PlanModel::memberOf(int64_t tensor) const {
  const std::vector<int64_t> &m = groups[tensorGroup[tensor]].members;
  return std::lower_bound(m.begin(), m.end(), tensor) - m.begin();
}

int64_t PlanModel::pieceBytes(int64_t group, int64_t piece) const {
  const PlanClass &c = classes[groups[group].cls];
  return c.pattern[piece].numElements() * c.exemplar.elementBytes;
}

std::vector<int64_t> PlanModel::planRanks() const {
  std::vector<int64_t> ranks;
  for (const PlanGroup &g : groups)
    for (const MeshSpec *m : {&g.srcMesh, &g.dstMesh})
      ranks.insert(ranks.end(), m->ranks.begin(), m->ranks.end());
  llvm::sort(ranks);
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  return ranks;
}

bool PlanModel::hasRelayTree() const {
  return llvm::any_of(groups, [](const PlanGroup &g) {
    return llvm::any_of(g.routes,
                        [](const RouteRow &r) { return r.feeder >= 0; });
  });
}

int64_t PlanModel::numRanks() const {
  int64_t n = 1; // an empty plan still needs a communicator
  for (const PlanGroup &g : groups)
    for (const MeshSpec *m : {&g.srcMesh, &g.dstMesh})
      for (int64_t r : m->ranks)
        n = std::max(n, r + 1);
  return n;
}

/// A key that two layouts of one class share (ranks left out).
static std::vector<int64_t> classKey(const TensorLayout &l) {
  std::vector<int64_t> key = {static_cast<int64_t>(l.shape.size()),
                              l.elementBytes};
  key.insert(key.end(), l.shape.begin(), l.shape.end());
  for (const SideLayout *side : {&l.src, &l.dst}) {
    key.push_back(-1);
    key.insert(key.end(), side->mesh.shape.begin(), side->mesh.shape.end());
    for (const DimSharding &d : side->sharding.dims) {
      key.push_back(-2);
      key.insert(key.end(), d.axes.begin(), d.axes.end());
      key.push_back(-3);
      key.insert(key.end(), d.blocks.begin(), d.blocks.end());
      key.push_back(-4); // runs are non-negative: the markers cannot clash
      for (const OrderRun &r : d.order)
        key.insert(key.end(), {r.start, r.length});
    }
    // The buffers' dim order places the same elements elsewhere.
    key.push_back(-6);
    key.insert(key.end(), side->sharding.dimOrder.begin(),
               side->sharding.dimOrder.end());
  }
  const QuantSpec &q = l.dst.sharding.quant;
  if (!q.empty()) { // a quantized payload is not a plain FP8 tensor
    key.insert(key.end(), {-5, int64_t(q.kind), q.mx, int64_t(q.ue8m0)});
    key.insert(key.end(), q.block.begin(), q.block.end());
  }
  return key;
}

static std::vector<int64_t> meshKey(const MeshSpec &m) {
  std::vector<int64_t> key(m.shape.begin(), m.shape.end());
  key.push_back(-1);
  key.insert(key.end(), m.ranks.begin(), m.ranks.end());
  return key;
}

PlanModel reshard::buildPlanModel(std::vector<TensorLayout> layouts,
                                  std::optional<TopologySpec> topology) {
  PlanModel model;
  model.topology = topology;
  std::map<std::vector<int64_t>, int64_t> classOf, meshOf;
  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> groupOf;
  auto meshId = [&](const MeshSpec &m) {
    return meshOf.try_emplace(meshKey(m), meshOf.size()).first->second;
  };
  for (size_t t = 0; t < layouts.size(); ++t) {
    TensorLayout &l = layouts[t];
    auto [cit, newClass] =
        classOf.try_emplace(classKey(l), model.classes.size());
    if (newClass)
      model.classes.push_back({l, ClassPattern(l.shape.size())});
    auto key =
        std::make_tuple(cit->second, meshId(l.src.mesh), meshId(l.dst.mesh));
    auto [git, newGroup] = groupOf.try_emplace(key, model.groups.size());
    if (newGroup) {
      PlanGroup g;
      g.cls = cit->second;
      g.srcMesh = l.src.mesh;
      g.dstMesh = l.dst.mesh;
      model.groups.push_back(std::move(g));
    }
    model.groups[git->second].members.push_back(t);
    model.tensorNames.push_back(std::move(l.name));
    model.tensorGroup.push_back(git->second);
  }
  for (PlanClass &c : model.classes)
    c.pattern = computeClassPattern(c.exemplar);
  return model;
}

PieceDeliveries reshard::deliveriesOf(const PlanModel &model, int64_t group,
                                      int64_t piece) {
  const PlanGroup &g = model.groups[group];
  const PlanClass &c = model.classes[g.cls];
  ClassPattern::Piece p = c.pattern[piece];
  MeshAxisSplit srcSplit(c.exemplar.src.mesh.shape, c.exemplar.src.sharding);
  MeshAxisSplit dstSplit(c.exemplar.dst.mesh.shape, c.exemplar.dst.sharding);
  PieceDeliveries out;
  for (int64_t r = 0, e = srcSplit.numReplicas(); r < e; ++r)
    out.holders.push_back(g.srcMesh.ranks[srcSplit.deviceOf(p.srcCombo(), r)]);
  llvm::sort(out.holders);
  llvm::SmallVector<int64_t, 8> holderDomains;
  for (int64_t h : out.holders)
    holderDomains.push_back(model.domainOf(h));
  // Network replicas as (domain, rank), grouped below: this runs for every
  // group piece in each enumeration, so no node-based map.
  llvm::SmallVector<std::pair<int64_t, int64_t>, 16> network;
  int64_t replicas = dstSplit.numReplicas();
  out.replicas.reserve(replicas);
  for (int64_t r = 0; r < replicas; ++r) {
    PieceDeliveries::Replica rep;
    rep.linear = dstSplit.deviceOf(p.dstCombo(), r);
    rep.rank = g.dstMesh.ranks[rep.linear];
    int64_t domain = model.domainOf(rep.rank);
    if (std::binary_search(out.holders.begin(), out.holders.end(), rep.rank)) {
      rep.kind = PieceDeliveries::Kind::Local;
    } else {
      for (size_t h = 0; h < out.holders.size(); ++h)
        if (holderDomains[h] == domain)
          rep.domainHolders.push_back(out.holders[h]);
      rep.kind = rep.domainHolders.empty() ? PieceDeliveries::Kind::Network
                                           : PieceDeliveries::Kind::NVLink;
    }
    if (rep.kind == PieceDeliveries::Kind::Network)
      network.push_back({domain, rep.rank});
    out.replicas.push_back(std::move(rep));
  }
  // Network replicas by domain, ascending by domain and then by rank.
  llvm::sort(network);
  for (size_t i = 0; i < network.size(); ++i) {
    if (i == 0 || network[i].first != network[i - 1].first)
      out.networkDomains.push_back({network[i].first, {}});
    out.networkDomains.back().ranks.push_back(network[i].second);
  }
  return out;
}
