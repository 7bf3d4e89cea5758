//===- Transfers.cpp - Route rules spelled out per sender and receiver ----===//
#include "reshard/Plan/Transfers.h"

#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <numeric>

using namespace reshard;

static int64_t mod(int64_t a, int64_t m) { return ((a % m) + m) % m; }

/// x with a * x = 1 (mod m), for a and m coprime, m >= 1.
static int64_t inverse(int64_t a, int64_t m) {
  int64_t r0 = mod(a, m), r1 = m, s0 = 1, s1 = 0;
  while (r1) { // extended Euclid
    int64_t q = r0 / r1;
    r0 -= q * r1;
    std::swap(r0, r1);
    s0 -= q * s1;
    std::swap(s0, s1);
  }
  return mod(s0, m);
}

void reshard::solveMembers(int64_t count, int64_t a, int64_t m, int64_t b,
                           int64_t n, int64_t &start, int64_t &stride,
                           int64_t &number) {
  a = mod(a, m);
  b = mod(b, n);
  int64_t g = std::gcd(m, n);
  number = 0;
  stride = m / g * n;
  if ((b - a) % g != 0)
    return;
  // k = a + m * t with m * t = b - a (mod n).
  int64_t mg = m / g, ng = n / g;
  int64_t t = ng == 1 ? 0 : mod((b - a) / g % ng * inverse(mg, ng), ng);
  start = a + m * t;
  if (start < count)
    number = (count - 1 - start) / stride + 1;
}

int64_t TransferGroup::commonMembers(const TransferGroup &o, int64_t &first,
                                     int64_t &stride) const {
  if (!memberCount || !o.memberCount)
    return 0;
  int64_t last = memberStart + (memberCount - 1) * memberStride;
  int64_t oLast = o.memberStart + (o.memberCount - 1) * o.memberStride;
  int64_t lo = std::max(memberStart, o.memberStart);
  int64_t hi = std::min(last, oLast);
  if (lo > hi)
    return 0;
  // A one-member progression's stride says nothing; any modulus 1 does.
  int64_t m = memberCount > 1 ? memberStride : 1;
  int64_t n = o.memberCount > 1 ? o.memberStride : 1;
  int64_t number;
  solveMembers(hi + 1, memberStart, m, o.memberStart, n, first, stride, number);
  if (!number)
    return 0;
  if (first < lo)
    first += (lo - first + stride - 1) / stride * stride;
  return first <= hi ? (hi - first) / stride + 1 : 0;
}

bool TransferGroup::sharesMembersWith(const TransferGroup &o) const {
  int64_t first, stride;
  return commonMembers(o, first, stride) > 0;
}

/// The transfers of one group piece (what enumerateTransfers lists for
/// it); `fedLaneBase` is the plan's rank count.
static void
appendTransfers(const PlanModel &model, int64_t group, int64_t piece,
                int64_t fedLaneBase,
                llvm::function_ref<void(const TransferGroup &)> out) {
  const PlanGroup &g = model.groups[group];
  int64_t members = g.numMembers();
  if (!members)
    return;
  PieceDeliveries d = deliveriesOf(model, group, piece);
  auto add = [&](int64_t sender, int64_t receiver, TransferKind kind,
                 int64_t start, int64_t stride, int64_t count,
                 int64_t lane = 0) {
    if (count > 0)
      out({group, piece, sender, receiver, kind, start, stride, count, lane});
  };
  bool balanced = g.routing == GroupRouting::Balanced;
  for (const PieceDeliveries::Replica &rep : d.replicas) {
    if (rep.kind == PieceDeliveries::Kind::Local) {
      add(rep.rank, rep.rank, TransferKind::Copy, 0, 1, members);
      continue;
    }
    if (!balanced) {
      add(d.holders.front(), rep.rank, TransferKind::Direct, 0, 1, members);
      continue;
    }
    if (rep.kind != PieceDeliveries::Kind::NVLink)
      continue; // the network crossings follow, per domain
    RouteRow r = g.route(piece, RouteKind::NVLink, rep.linear);
    int64_t n = rep.domainHolders.size();
    for (int64_t h = 0; h < n; ++h) {
      int64_t start = mod(h - r.holderBase, n);
      if (start < members)
        add(rep.domainHolders[h], rep.rank, TransferKind::Direct, start, n,
            (members - 1 - start) / n + 1);
    }
  }
  if (!balanced)
    return;
  int64_t nH = d.holders.size();
  for (const PieceDeliveries::Domain &dom : d.networkDomains) {
    RouteRow r = g.route(piece, RouteKind::Network, dom.domain);
    int64_t nE = dom.ranks.size();
    // Who feeds the entries: the holders, or the feeder domain's entries
    // (each forwarding, over the network, the members it entered with).
    llvm::ArrayRef<int64_t> feeders = d.holders;
    int64_t feederBase = r.holderBase;
    TransferKind feed = TransferKind::Direct;
    if (r.feeder >= 0) {
      for (const PieceDeliveries::Domain &f : d.networkDomains)
        if (f.domain == r.feeder)
          feeders = f.ranks;
      feederBase = g.route(piece, RouteKind::Network, r.feeder).entryBase;
      feed = TransferKind::Relay;
    }
    int64_t nF = feeders.size();
    // Members k = e - entryBase (mod nE) and k = h - feederBase (mod nF)
    // exist only where h = e - entryBase + feederBase (mod gcd(nE, nF)).
    // The entry forwards what each feeder sent it to the domain's other
    // ranks: in that feeder's lane (model.relayLanes), else in one stream.
    int64_t common = std::gcd(nE, nF);
    bool lanes = model.relayLanes;
    for (int64_t e = 0; e < nE; ++e)
      for (int64_t h = mod(e - r.entryBase + feederBase, common); h < nF;
           h += common) {
        int64_t start, stride, count;
        solveMembers(members, e - r.entryBase, nE, h - feederBase, nF, start,
                     stride, count);
        if (feed == TransferKind::Direct || !lanes) {
          add(feeders[h], dom.ranks[e], feed, start, stride, count);
          for (int64_t other = 0; lanes && other < nE; ++other)
            if (other != e)
              add(dom.ranks[e], dom.ranks[other], TransferKind::Relay, start,
                  stride, count, model.laneOf(feeders[h]));
          continue;
        }
        // With lanes a fed domain keeps the holders' lanes: the feeder's
        // entry forwards what holder x sent it in lane x, and the entry
        // forwards that to its domain's others in lane R + x (R the rank
        // count), apart from what x may send it directly (lane x): each
        // relay stream then mirrors one incoming stream, and never has to
        // interleave two that arrive at once. Members of (e, h) and holder
        // x: k = start (mod stride) and k = x - holderBase (mod nH).
        RouteRow rf = g.route(piece, RouteKind::Network, r.feeder);
        int64_t period = count > 1 ? stride : members;
        int64_t gx = std::gcd(period, nH);
        for (int64_t x = mod(start + rf.holderBase, gx); x < nH; x += gx) {
          int64_t s2, stride2, count2;
          solveMembers(members, start, period, x - rf.holderBase, nH, s2,
                       stride2, count2);
          if (s2 < start)
            continue;
          add(feeders[h], dom.ranks[e], feed, s2, stride2, count2,
              model.laneOf(d.holders[x]));
          for (int64_t other = 0; other < nE; ++other)
            if (other != e)
              add(dom.ranks[e], dom.ranks[other], TransferKind::Relay, s2,
                  stride2, count2, fedLaneBase + model.laneOf(d.holders[x]));
        }
      }
    for (int64_t e = 0; !lanes && e < nE; ++e) {
      int64_t start = mod(e - r.entryBase, nE);
      if (start >= members)
        continue;
      int64_t count = (members - 1 - start) / nE + 1;
      for (int64_t other = 0; other < nE; ++other)
        if (other != e)
          add(dom.ranks[e], dom.ranks[other], TransferKind::Relay, start, nE,
              count);
    }
  }
}

std::vector<TransferGroup> reshard::enumerateTransfers(const PlanModel &model) {
  std::vector<TransferGroup> out;
  // About one transfer per piece and destination replica.
  size_t estimate = 0;
  for (const PlanGroup &g : model.groups)
    estimate += model.classes[g.cls].pattern.size() * 2;
  out.reserve(estimate);
  forEachTransfer(model, [&](const TransferGroup &t) { out.push_back(t); });
  return out;
}

void reshard::forEachTransfer(
    const PlanModel &model,
    llvm::function_ref<void(const TransferGroup &)> sink) {
  // Fed lanes R + holder must stay relay phases (below kTransitInPhase);
  // past 2^30 ranks they share the holder's lane (slower, as correct).
  int64_t ranks = model.numRanks();
  int64_t fedLaneBase = 1 + 2 * ranks < kTransitInPhase ? ranks : 0;
  for (size_t g = 0; g < model.groups.size(); ++g) {
    const ClassPattern &p = model.classes[model.groups[g].cls].pattern;
    for (size_t j = 0; j < p.size(); ++j)
      appendTransfers(model, g, j, fedLaneBase, sink);
  }
}
