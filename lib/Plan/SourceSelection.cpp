//===- SourceSelection.cpp - Who sends each piece, and through whom -------===//
//
// Greedy balancing in decreasing size (longest processing time first): each
// network crossing goes to the holder whose NIC has sent least so far and
// enters the destination's NVLink domain at the destination rank whose NIC
// has received least. Destinations of one domain that need the same piece
// share one crossing; the entry rank forwards it over NVLink. The unit of a
// decision is a group piece, its members rotating from the chosen candidate
// on, so the work grows with groups and pieces, not with members.
//
//===----------------------------------------------------------------------===//
#include "reshard/Plan/SourceSelection.h"

#include "reshard/Plan/CostModel.h"
#include "reshard/Plan/Transfers.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/ThreadPool.h"

#include <algorithm>
#include <map>
#include <optional>

using namespace reshard;

namespace {

/// Bytes per rank so far: a map, as ranks may be sparse and large.
using Loads = llvm::DenseMap<int64_t, int64_t>;

/// The index of the candidate with the least load (the first on ties).
int64_t leastLoaded(llvm::ArrayRef<int64_t> ranks, const Loads &load) {
  int64_t best = 0, bestLoad = load.lookup(ranks.front());
  for (size_t i = 1; i < ranks.size(); ++i) {
    int64_t l = load.lookup(ranks[i]);
    if (l < bestLoad) {
      best = i;
      bestLoad = l;
    }
  }
  return best;
}

/// Adds `bytes` for every member to the candidate it rotates onto.
void addRotated(Loads &load, llvm::ArrayRef<int64_t> ranks, int64_t base,
                int64_t members, int64_t bytes) {
  int64_t n = ranks.size();
  for (int64_t c = 0; c < n; ++c) {
    int64_t start = ((c - base) % n + n) % n;
    if (start < members)
      load[ranks[c]] += ((members - 1 - start) / n + 1) * bytes;
  }
}

/// The largest load among `ranks` once `members` x `bytes` rotate onto
/// them from `base`.
int64_t peakRotated(const Loads &load, llvm::ArrayRef<int64_t> ranks,
                    int64_t base, int64_t members, int64_t bytes) {
  int64_t n = ranks.size(), peak = 0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t start = ((c - base) % n + n) % n;
    int64_t count = start < members ? (members - 1 - start) / n + 1 : 0;
    peak = std::max(peak, load.lookup(ranks[c]) + count * bytes);
  }
  return peak;
}

/// A network domain of a piece that its holders feed: its entries, and
/// from which one member 0 enters.
struct Fed {
  int64_t domain, entryBase;
  llvm::SmallVector<int64_t, 4> entries;
};

/// One decision to make: an NVLink replica or a network domain of a piece.
struct Unit {
  int64_t group, piece;
  RouteKind kind;
  int64_t key;
  int64_t weight;
  llvm::SmallVector<int64_t, 4> holders, entries; // candidates, ascending
  /// Where a network domain comes among its piece's (0 first) once they
  /// rotate by group: group g's pieces meet domain g mod n first (with
  /// feeders in rank order all are 0: enumeration order). The domain met
  /// first gets the piece from the holders and then feeds the others (a
  /// relay tree); without the rotation the lowest-ranked replica would feed
  /// every piece, and its GPUs, receiving only slow flows from holders
  /// that send to every GPU, would finish each step last under fair
  /// sharing (docs/Rationale.md). Used only with feeders rotating.
  int64_t turn = 0;
};

/// Every decision of a plan, in the order they are met: the same whether
/// feeders rotate or not, so RelayTree::Auto collects them once.
struct Units {
  std::vector<Unit> nvlink, network;
};

Units collectUnits(const PlanModel &model) {
  Units units;
  for (size_t g = 0; g < model.groups.size(); ++g) {
    const PlanGroup &group = model.groups[g];
    const ClassPattern &pattern = model.classes[group.cls].pattern;
    // Decisions are met in the order of the group's pieces sorted by
    // destination rank (stable), as a single tensor's table reads.
    struct Entry {
      int64_t rank, piece, replica;
    };
    std::vector<PieceDeliveries> deliveries;
    std::vector<Entry> entries;
    deliveries.reserve(pattern.size());
    entries.reserve(pattern.size());
    for (size_t j = 0; j < pattern.size(); ++j) {
      deliveries.push_back(deliveriesOf(model, g, j));
      for (size_t r = 0; r < deliveries.back().replicas.size(); ++r)
        entries.push_back({deliveries.back().replicas[r].rank,
                           static_cast<int64_t>(j), static_cast<int64_t>(r)});
    }
    std::stable_sort(
        entries.begin(), entries.end(),
        [](const Entry &a, const Entry &b) { return a.rank < b.rank; });
    std::map<std::pair<int64_t, int64_t>, bool> seen; // (piece, domain)
    for (const Entry &e : entries) {
      const PieceDeliveries &d = deliveries[e.piece];
      const PieceDeliveries::Replica &rep = d.replicas[e.replica];
      int64_t weight = model.pieceBytes(g, e.piece) * group.numMembers();
      if (rep.kind == PieceDeliveries::Kind::NVLink) {
        units.nvlink.push_back({static_cast<int64_t>(g),
                                e.piece,
                                RouteKind::NVLink,
                                rep.linear,
                                weight,
                                rep.domainHolders,
                                {}});
        continue;
      }
      if (rep.kind != PieceDeliveries::Kind::Network)
        continue;
      int64_t domain = model.domainOf(rep.rank);
      if (!seen.try_emplace({e.piece, domain}, true).second)
        continue;
      const PieceDeliveries::Domain *dom = nullptr;
      int64_t index = 0, n = d.networkDomains.size();
      for (const PieceDeliveries::Domain &x : d.networkDomains)
        if (x.domain == domain)
          dom = &x;
        else if (!dom)
          ++index;
      int64_t first = static_cast<int64_t>(g) % n;
      units.network.push_back({static_cast<int64_t>(g), e.piece,
                               RouteKind::Network, domain, weight, d.holders,
                               dom->ranks, (index - first + n) % n});
    }
  }
  return units;
}

} // namespace

llvm::SmallVector<int64_t, 3>
reshard::streamsWithLanes(PlanModel &model, llvm::ArrayRef<int64_t> spans) {
  // One enumeration with a lane per holder: a wider span only merges
  // lanes (holder x's lane, or fed lane R + x, becomes its block's first
  // rank's), so each span's streams are these keys with lanes merged.
  bool lanes = model.relayLanes;
  int64_t span = model.relayLaneSpan;
  model.relayLanes = true;
  model.relayLaneSpan = 1;
  // The streams with a lane per holder (phase 1 + lane for relays), then
  // each span's as their image (far fewer keys than transfers).
  using Key = std::tuple<int64_t, int64_t, int64_t>;
  llvm::DenseSet<Key> perHolder;
  forEachTransfer(model, [&](const TransferGroup &t) {
    if (t.kind != TransferKind::Copy)
      perHolder.insert({t.sender, t.receiver, t.phase()});
  });
  model.relayLanes = lanes;
  model.relayLaneSpan = span;
  int64_t ranks = model.numRanks();
  llvm::SmallVector<int64_t, 3> counts;
  for (int64_t s : spans) {
    if (s == 1) {
      counts.push_back(perHolder.size());
      continue;
    }
    auto merged = [&](int64_t lane) {
      int64_t fed = lane >= ranks ? ranks : 0;
      return fed + (lane - fed) - (lane - fed) % s;
    };
    llvm::DenseSet<Key> keys;
    keys.reserve(perHolder.size());
    for (const auto &[sender, receiver, phase] : perHolder)
      keys.insert({sender, receiver, phase ? 1 + merged(phase - 1) : 0});
    counts.push_back(keys.size());
  }
  return counts;
}

llvm::SmallVector<int64_t, 3> reshard::relayLaneSpans(const PlanModel &model) {
  int64_t domain = model.topology ? model.topology->nvlDomainSize : 1;
  llvm::SmallVector<int64_t, 3> spans = {1};
  for (int64_t s : {domain, 2 * domain})
    if (s > spans.back())
      spans.push_back(s);
  return spans;
}

/// Routes every group of `units` (collectUnits) with balanced routing.
static void balance(PlanModel &model, const Units &units, RelayTree tree,
                    bool rotateFeeders) {
  for (PlanGroup &group : model.groups) {
    group.routes.clear();
    group.routing = GroupRouting::Balanced;
  }
  const std::vector<Unit> &nvlink = units.nvlink, &network = units.network;
  // Heaviest first, then by turn, ties in enumeration order; units are
  // sorted by index (they carry their candidate lists).
  auto heavierFirst = [&](const std::vector<Unit> &units) {
    std::vector<uint32_t> order(units.size());
    for (uint32_t i = 0; i < order.size(); ++i)
      order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      int64_t ta = rotateFeeders ? units[a].turn : 0;
      int64_t tb = rotateFeeders ? units[b].turn : 0;
      return std::make_pair(-units[a].weight, ta) <
             std::make_pair(-units[b].weight, tb);
    });
    return order;
  };
  Loads nicOut, nicIn, nvlOut;
  // A domain may be fed by another domain's entries instead of the holders
  // (a relay tree), where the holders' NICs would pass the physical bound
  // per NIC and the feeder's entries are less loaded: the piece then leaves
  // its holders' domain once for both.
  int64_t perNic =
      tree == RelayTree::Bound ? physicalBounds(model).perNicBytes : 0;
  std::map<std::pair<int64_t, int64_t>, std::vector<Fed>> fedByHolders;
  for (uint32_t i : heavierFirst(nvlink)) {
    const Unit &u = nvlink[i];
    PlanGroup &group = model.groups[u.group];
    int64_t base = leastLoaded(u.holders, nvlOut);
    addRotated(nvlOut, u.holders, base, group.numMembers(),
               model.pieceBytes(u.group, u.piece));
    if (base)
      group.routes.push_back({u.piece, u.kind, u.key, base, 0, -1});
  }
  for (uint32_t i : heavierFirst(network)) {
    const Unit &u = network[i];
    PlanGroup &group = model.groups[u.group];
    int64_t bytes = model.pieceBytes(u.group, u.piece);
    int64_t members = group.numMembers();
    int64_t entry = leastLoaded(u.entries, nicIn);
    int64_t holder = leastLoaded(u.holders, nicOut);
    int64_t peak = peakRotated(nicOut, u.holders, holder, members, bytes);
    std::vector<Fed> &fed = fedByHolders[{u.group, u.piece}];
    const Fed *feeder = nullptr;
    if (tree == RelayTree::Always ||
        (tree == RelayTree::Bound && peak > perNic))
      for (const Fed &f : fed) {
        int64_t p = peakRotated(nicOut, f.entries, f.entryBase, members, bytes);
        if (p < peak) {
          peak = p;
          feeder = &f;
        }
      }
    addRotated(nicIn, u.entries, entry, members, bytes);
    if (feeder)
      addRotated(nicOut, feeder->entries, feeder->entryBase, members, bytes);
    else
      addRotated(nicOut, u.holders, holder, members, bytes);
    addRotated(nvlOut, u.entries, entry, members,
               bytes * static_cast<int64_t>(u.entries.size() - 1));
    int64_t from = feeder ? feeder->domain : -1;
    if (holder || entry || feeder)
      group.routes.push_back(
          {u.piece, u.kind, u.key, feeder ? 0 : holder, entry, from});
    if (!feeder)
      fed.push_back({u.key, entry, u.entries});
  }
  for (PlanGroup &group : model.groups)
    llvm::sort(group.routes);
}

namespace {
/// One attempt of RelayTree::Auto: the routes (in the model it ran on)
/// with feeders rotating or in rank order, and its streams per lane span.
struct TreeAttempt {
  bool tree = false;
  llvm::SmallVector<int64_t, 3> spans, streams;
};
} // namespace

static TreeAttempt attemptTree(PlanModel &model, const Units &units,
                               bool rotate) {
  TreeAttempt a;
  balance(model, units, RelayTree::Bound, rotate);
  a.tree = model.hasRelayTree();
  if (a.tree) {
    a.spans = relayLaneSpans(model);
    a.streams = streamsWithLanes(model, a.spans);
  }
  return a;
}

/// Whether `model`, routed by `a`, is final: no tree, or one that fits
/// `maxStreams` with some lane span (then taken); `fit` says how.
static bool settles(const TreeAttempt &a, PlanModel &model, int64_t maxStreams,
                    RelayTreeFit &fit) {
  if (!a.tree)
    return true;
  if (a.streams[0] <= maxStreams) {
    fit.perHolderStreams = 0;
    fit.laneSpan = 1;
    return true;
  }
  fit.perHolderStreams = fit.streams = a.streams[0];
  for (auto [span, count] : llvm::drop_begin(llvm::zip(a.spans, a.streams))) {
    fit.laneSpan = span;
    fit.streams = count;
    if (count <= maxStreams) {
      model.relayLaneSpan = span;
      return true;
    }
  }
  return false;
}

RelayTreeFit reshard::selectSources(PlanModel &model, SourceStrategy strategy,
                                    RelayTree tree, int64_t maxStreams,
                                    bool rotateFeeders,
                                    llvm::ThreadPoolInterface *pool) {
  model.relayLaneSpan = 1;
  if (strategy == SourceStrategy::Direct) {
    for (PlanGroup &group : model.groups) {
      group.routes.clear();
      group.routing = GroupRouting::Direct;
    }
    return {};
  }
  Units units = collectUnits(model);
  if (tree != RelayTree::Auto) {
    balance(model, units, tree, rotateFeeders);
    return {};
  }
  // Feeders rotating, then in rank order where that does not fit. With a
  // pool the second attempt runs meanwhile on a copy of the model (where
  // rotation fits, its work is dropped): the same result, sooner.
  RelayTreeFit fit;
  std::optional<PlanModel> ranked;
  TreeAttempt rankOrder;
  std::optional<llvm::ThreadPoolTaskGroup> meanwhile;
  if (pool) {
    ranked.emplace(model);
    meanwhile.emplace(*pool);
    meanwhile->async(
        [&] { rankOrder = attemptTree(*ranked, units, /*rotate=*/false); });
  }
  TreeAttempt rotating = attemptTree(model, units, /*rotate=*/true);
  if (settles(rotating, model, maxStreams, fit))
    return fit; // (the group waits for the dropped attempt)
  fit.rotatedStreams = rotating.streams.back();
  if (meanwhile) {
    meanwhile->wait();
    model.groups = std::move(ranked->groups); // its routes
  } else {
    rankOrder = attemptTree(model, units, /*rotate=*/false);
  }
  if (settles(rankOrder, model, maxStreams, fit))
    return fit;
  fit.laneSpan = 0;
  balance(model, units, RelayTree::Never, true);
  return fit;
}
