//===- Expansion.cpp - Explicit pieces from classes and routes ------------===//
#include "reshard/Plan/Expansion.h"

#include <map>

using namespace reshard;

static int64_t rotate(int64_t base, int64_t member, int64_t n) {
  return (base + member) % n;
}

PieceTable reshard::expandPieces(const PlanModel &model, int64_t tensor) {
  int64_t g = model.tensorGroup[tensor], k = model.memberOf(tensor);
  const PlanGroup &group = model.groups[g];
  const ClassPattern &pattern = model.classes[group.cls].pattern;
  PieceTable table(pattern.rank());
  std::map<int64_t, int64_t> holderGroupOf; // source combo -> holder group
  bool balanced = group.routing == GroupRouting::Balanced;
  for (size_t j = 0; j < pattern.size(); ++j) {
    ClassPattern::Piece p = pattern[j];
    PieceDeliveries d = deliveriesOf(model, g, j);
    auto [it, inserted] =
        holderGroupOf.try_emplace(p.srcCombo(), table.numHolderGroups());
    if (inserted)
      table.addHolderGroup(d.holders);
    for (const PieceDeliveries::Replica &r : d.replicas) {
      int64_t src = d.holders.front(), via = -1, step = 0;
      if (r.kind == PieceDeliveries::Kind::Local) {
        src = r.rank;
      } else if (balanced && r.kind == PieceDeliveries::Kind::NVLink) {
        RouteRow route = group.route(j, RouteKind::NVLink, r.linear);
        src = r.domainHolders[rotate(route.holderBase, k,
                                     r.domainHolders.size())];
      } else if (balanced) {
        int64_t domain = model.domainOf(r.rank);
        RouteRow route = group.route(j, RouteKind::Network, domain);
        const PieceDeliveries::Domain *dom = nullptr;
        for (const PieceDeliveries::Domain &x : d.networkDomains)
          if (x.domain == domain)
            dom = &x;
        int64_t entry =
            dom->ranks[rotate(route.entryBase, k, dom->ranks.size())];
        // A fed domain's entry gets the box from the feeder's entry (step
        // 1), which got it from the holder; its domain's others from it.
        int64_t hops = 0;
        if (route.feeder >= 0) {
          RouteRow feeder = group.route(j, RouteKind::Network, route.feeder);
          for (const PieceDeliveries::Domain &x : d.networkDomains)
            if (x.domain == route.feeder)
              via = x.ranks[rotate(feeder.entryBase, k, x.ranks.size())];
          route.holderBase = feeder.holderBase;
          hops = 1;
        }
        src = d.holders[rotate(route.holderBase, k, d.holders.size())];
        step = hops;
        if (entry != r.rank) {
          via = entry;
          step = hops + 1;
        }
      }
      table.addPiece(r.rank, src, it->second, p.globalOffset(), p.sizes(),
                     p.dstOffset(), p.srcOffset(), via, step);
    }
  }
  table.sortByDestination();
  return table;
}
