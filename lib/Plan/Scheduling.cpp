//===- Scheduling.cpp - Streams placed within a staging budget ------------===//
#include "reshard/Plan/Scheduling.h"

#include "reshard/Layout/RelayTiming.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <optional>

using namespace reshard;

/// Relays come in two levels: between domains (a feeder domain's entry to
/// a fed domain's entry), which forward what holders sent, and within a
/// domain, which forward what either brought.
static bool crossesDomains(const PlanModel &model, const StreamContent &s) {
  return isRelay(s.phase) &&
         model.domainOf(s.sender) != model.domainOf(s.receiver);
}
static bool relaysWithin(const PlanModel &model, const StreamContent &s) {
  return isRelay(s.phase) && !crossesDomains(model, s);
}

/// Stably sorts a stream's transfers by key(transfer).
template <class Key>
static void sortTransfersBy(std::vector<size_t> &transfers, Key key) {
  std::vector<std::pair<decltype(key(size_t())), size_t>> keyed;
  keyed.reserve(transfers.size());
  for (size_t t : transfers)
    keyed.push_back({key(t), t});
  std::stable_sort(
      keyed.begin(), keyed.end(),
      [](const auto &a, const auto &b) { return a.first < b.first; });
  for (size_t j = 0; j < keyed.size(); ++j)
    transfers[j] = keyed[j].second;
}

/// Puts first in every holder's stream what its receiver forwards to
/// another domain, then what it forwards within its own, then what it
/// only keeps (each in enumeration order). A relay runs at a fixed pace
/// from its start, and starts once that pace never overtakes its
/// arrivals, so a relay whose bytes came last in the stream (enumeration
/// order groups them by tensor) would start, and end, late; ahead of the
/// rest they arrive faster than the relay forwards them. What crosses to
/// another domain goes first because a relay there forwards it once more.
static void sendForwardedFirst(const PlanModel &model,
                               const std::vector<TransferGroup> &transfers,
                               std::vector<StreamContent> &streams) {
  // (relay sender, group, piece) -> its relay transfers
  llvm::DenseMap<std::tuple<int64_t, int64_t, int64_t>,
                 llvm::SmallVector<size_t, 2>>
      relays;
  for (size_t i = 0; i < transfers.size(); ++i)
    if (transfers[i].kind == TransferKind::Relay)
      relays[{transfers[i].sender, transfers[i].group, transfers[i].piece}]
          .push_back(i);
  if (relays.empty())
    return;
  // 0: forwarded to another domain, 1: within the receiver's, 2: kept.
  auto classOf = [&](const TransferGroup &x, int64_t at) {
    auto it = relays.find({at, x.group, x.piece});
    int64_t best = 2;
    if (it != relays.end())
      for (size_t r : it->second)
        if (transfers[r].sharesMembersWith(x))
          best = std::min<int64_t>(
              best, model.domainOf(transfers[r].receiver) != model.domainOf(at)
                        ? 0
                        : 1);
    return best;
  };
  for (StreamContent &s : streams) {
    if (!bringsHolderBytes(s.phase) && !isTransitIn(s.phase))
      continue;
    // A transit's two streams carry the same transfers in the same order:
    // both rank them where they end.
    int64_t at = isTransitIn(s.phase) ? s.phase - kTransitInPhase : s.receiver;
    sortTransfersBy(s.transfers,
                    [&](size_t t) { return classOf(transfers[t], at); });
  }
}

std::vector<StreamContent>
reshard::collectStreams(const PlanModel &model,
                        const std::vector<TransferGroup> &transfers) {
  // Which streams each transfer joins (first come; a holder stream through
  // a transit is two streams with the same transfers), then the streams in
  // (sender, receiver, phase) order, each filled in transfer order.
  llvm::DenseMap<std::tuple<int64_t, int64_t, int64_t>, uint32_t> at;
  std::vector<std::pair<size_t, uint32_t>> joins; // (transfer, stream)
  joins.reserve(transfers.size());
  std::vector<StreamContent> found;
  std::vector<size_t> sizes;
  auto join = [&](size_t i, int64_t sender, int64_t receiver, int64_t phase) {
    const TransferGroup &t = transfers[i];
    auto [it, inserted] =
        at.try_emplace(std::make_tuple(sender, receiver, phase), found.size());
    if (inserted) {
      found.push_back({sender, receiver, phase, 0, {}});
      sizes.push_back(0);
    }
    found[it->second].bytes +=
        t.memberCount * model.pieceBytes(t.group, t.piece);
    ++sizes[it->second];
    joins.push_back({i, it->second});
  };
  for (size_t i = 0; i < transfers.size(); ++i) {
    const TransferGroup &t = transfers[i];
    if (t.kind == TransferKind::Copy)
      continue;
    int64_t via = t.phase() == 0 && !model.transits.empty()
                      ? model.transitVia(t.sender, t.receiver)
                      : -1;
    if (via < 0) {
      join(i, t.sender, t.receiver, t.phase());
      continue;
    }
    join(i, t.sender, via, kTransitInPhase + t.receiver);
    join(i, via, t.receiver, kTransitOutPhase + t.sender);
  }
  std::vector<uint32_t> order(found.size());
  for (uint32_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::sort(order, [&](uint32_t a, uint32_t b) {
    return std::tie(found[a].sender, found[a].receiver, found[a].phase) <
           std::tie(found[b].sender, found[b].receiver, found[b].phase);
  });
  std::vector<uint32_t> position(found.size());
  std::vector<StreamContent> streams;
  streams.reserve(found.size());
  for (uint32_t p = 0; p < order.size(); ++p) {
    position[order[p]] = p;
    streams.push_back(std::move(found[order[p]]));
    streams.back().transfers.reserve(sizes[order[p]]);
  }
  for (auto [i, stream] : joins)
    streams[position[stream]].transfers.push_back(i);
  sendForwardedFirst(model, transfers, streams);
  return streams;
}

PlanSchedule
reshard::trivialSchedule(const PlanModel &model,
                         const std::vector<StreamContent> &streams) {
  PlanSchedule s;
  s.stagingBudget = 0; // none
  // Relays within a domain forward what relays between domains bring too.
  bool crossing = llvm::any_of(streams, [&](const StreamContent &c) {
    return crossesDomains(model, c);
  });
  for (const StreamContent &c : streams) {
    int64_t start = isTransitOut(c.phase) ? 1 : 0;
    if (isRelay(c.phase))
      start = crossing && !crossesDomains(model, c) ? 2 : 1;
    s.streams.push_back(
        {c.sender, c.receiver, c.phase, start, std::max<int64_t>(c.bytes, 1)});
  }
  return s;
}

PlanSchedule reshard::scheduleOf(const PlanModel &model,
                                 const std::vector<StreamContent> &streams) {
  return model.schedule ? *model.schedule : trivialSchedule(model, streams);
}

namespace {
/// How many streams each rank runs in each step.
class Occupancy {
public:
  explicit Occupancy(const llvm::DenseMap<int64_t, int64_t> &capacity)
      : capacity(capacity) {}
  /// The first step in [start, start + steps) where `rank` is full, or -1.
  int64_t firstFull(int64_t rank, int64_t start, int64_t steps) {
    std::vector<int64_t> &v = perRank[rank];
    int64_t cap = capacity.lookup(rank);
    for (int64_t s = start, e = std::min<int64_t>(start + steps, v.size());
         s < e; ++s)
      if (v[s] >= cap)
        return s;
    return -1;
  }
  void add(int64_t rank, int64_t start, int64_t steps) {
    std::vector<int64_t> &v = perRank[rank];
    if (static_cast<int64_t>(v.size()) < start + steps)
      v.resize(start + steps, 0);
    for (int64_t s = start; s < start + steps; ++s)
      ++v[s];
  }

private:
  const llvm::DenseMap<int64_t, int64_t> &capacity;
  llvm::DenseMap<int64_t, std::vector<int64_t>> perRank;
};
} // namespace

namespace {
/// A phase-0 transfer as its receiver sees it: the stream's start and
/// quota, the transfer's first byte in it and the step of its last byte.
struct Arrival {
  int64_t rank, group, piece;
  size_t transfer;
  int64_t start, quota, at, last;
  auto key() const { return std::make_tuple(rank, group, piece); }
};
} // namespace

/// Every transfer of a holder's stream (phase 0, or forwarded by a transit)
/// that carries bytes, and with `crossing` of every relay between domains,
/// as it arrives, sorted by (rank, group, piece) and, within one, latest
/// first.
static std::vector<Arrival>
streamArrivals(const PlanModel &model,
               const std::vector<TransferGroup> &transfers,
               const std::vector<StreamContent> &streams,
               const PlanSchedule &schedule, bool crossing = false) {
  std::vector<Arrival> arrivals;
  for (const StreamContent &s : streams) {
    bool arrives =
        bringsHolderBytes(s.phase) || (crossing && crossesDomains(model, s));
    const PlanStream *row =
        arrives ? schedule.find(s.sender, s.receiver, s.phase) : nullptr;
    if (!row)
      continue;
    int64_t at = 0;
    for (size_t t : s.transfers) {
      const TransferGroup &x = transfers[t];
      int64_t bytes = x.memberCount * model.pieceBytes(x.group, x.piece);
      if (bytes > 0)
        arrivals.push_back({s.receiver, x.group, x.piece, t, row->start,
                            row->quota, at,
                            row->start + (at + bytes - 1) / row->quota});
      at += bytes;
    }
  }
  llvm::sort(arrivals, [](const Arrival &a, const Arrival &b) {
    return std::make_tuple(a.key(), -a.last, a.transfer) <
           std::make_tuple(b.key(), -b.last, b.transfer);
  });
  return arrivals;
}

/// The arrivals of (rank, group, piece), latest first.
static llvm::ArrayRef<Arrival> arrivalsOf(llvm::ArrayRef<Arrival> arrivals,
                                          int64_t rank, int64_t group,
                                          int64_t piece) {
  auto key = std::make_tuple(rank, group, piece);
  auto lo = llvm::partition_point(
      arrivals, [&](const Arrival &a) { return a.key() < key; });
  auto hi = std::partition_point(
      lo, arrivals.end(), [&](const Arrival &a) { return a.key() == key; });
  return llvm::ArrayRef<Arrival>(lo, hi);
}

/// Sorts the transfers of each relay stream `which` picks by the step they
/// are ready in: after the last byte of every arrival that brought the
/// relay any of their members (0 for local copies, which are there before
/// step 0).
template <class Which>
static void orderRelaysBy(llvm::ArrayRef<Arrival> arrivals,
                          const std::vector<TransferGroup> &transfers,
                          std::vector<StreamContent> &streams, Which which) {
  for (StreamContent &s : streams) {
    if (!which(s))
      continue;
    // The step after the last arrival and, within one step, where that
    // arrival sits in its stream, so that a relay keeps the order its
    // bytes come in.
    auto readyOf = [&](size_t t) -> std::pair<int64_t, int64_t> {
      const TransferGroup &x = transfers[t];
      // Latest first: the first that shares a member decides.
      for (const Arrival &a : arrivalsOf(arrivals, s.sender, x.group, x.piece))
        if (transfers[a.transfer].sharesMembersWith(x))
          return {a.last + 1, a.at};
      return {0, 0};
    };
    sortTransfersBy(s.transfers, readyOf);
  }
}

void reshard::orderRelays(const PlanModel &model,
                          const std::vector<TransferGroup> &transfers,
                          const PlanSchedule &schedule,
                          std::vector<StreamContent> &streams) {
  orderRelaysBy(
      streamArrivals(model, transfers, streams, schedule), transfers, streams,
      [&](const StreamContent &s) { return crossesDomains(model, s); });
  orderRelaysBy(streamArrivals(model, transfers, streams, schedule, true),
                transfers, streams,
                [&](const StreamContent &s) { return relaysWithin(model, s); });
}

namespace {
/// Starts each relay stream (their transfers in orderRelays' order) at the
/// first step where every byte it forwards goes out in a later step than
/// it arrived in (RelayTiming.h), or, where that is later, every
/// transfer's first byte after the last byte of what brought it.
template <class Which>
void startRelays(const PlanModel &model, llvm::ArrayRef<Arrival> arrivals,
                 const std::vector<TransferGroup> &transfers,
                 const std::vector<StreamContent> &streams,
                 PlanSchedule &schedule, Which which) {
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamContent &s = streams[i];
    if (!which(s))
      continue;
    PlanStream &row = schedule.streams[i];
    int64_t start = 0, at = 0;
    for (size_t t : s.transfers) {
      const TransferGroup &x = transfers[t];
      int64_t pb = model.pieceBytes(x.group, x.piece);
      for (const Arrival &a :
           arrivalsOf(arrivals, s.sender, x.group, x.piece)) {
        const TransferGroup &y = transfers[a.transfer];
        int64_t first, stride;
        int64_t common = x.commonMembers(y, first, stride);
        if (!common)
          continue;
        SharedMembers m =
            sharedMembers(first, stride, common, pb, a.start, a.quota,
                          {a.at, y.memberStart, y.memberStride},
                          {at, x.memberStart, x.memberStride});
        int64_t whole = a.last + 1 - at / row.quota;
        start = std::max(start,
                         std::min(whole, leastCutThroughStart(m, row.quota)));
      }
      at += x.memberCount * pb;
    }
    row.start = start;
  }
}

/// The quotas of a stream its receiver stages at once: the step's, one
/// more a transit keeps for a step (its carry), one more with receives
/// ahead (the next step's).
int64_t receiveCopies(const StreamContent &s, const ScheduleOptions &options) {
  return 1 + (isTransitIn(s.phase) ? 1 : 0) + (options.receivesAhead ? 1 : 0);
}

/// Every stream at once and at one pace: with N steps, stream i moves
/// ceil(b_i / N) bytes a step, so that every rank moves 1/N of its bytes
/// in every step and each step lasts about 1/N of the busiest link's time
/// (a share of the budget by bytes alone would run light ranks' streams
/// out early and leave the busy links' load uneven over the steps). N is
/// the least whose rounded quotas fit every rank's budget; T_x / N + K_x
/// <= B (T_x a rank's bytes, K_x its streams, both weighted as staged: a
/// transit's receive twice with its carry, and every receive once more
/// where the next step's receives are posted while a step is in flight)
/// bounds it. Relays
/// start as soon as what they forward has arrived (startRelays). None when
/// a rank has more streams than operations per step or than bytes in the
/// budget.
std::optional<PlanSchedule> uniformSchedule(
    const PlanModel &model, const std::vector<TransferGroup> &transfers,
    const std::vector<StreamContent> &streams, const ScheduleOptions &options,
    const llvm::DenseMap<int64_t, int64_t> &streamsAt,
    const llvm::DenseMap<int64_t, int64_t> &peersAt,
    const llvm::DenseMap<int64_t, int64_t> &bytesAt) {
  // T_x / N + K_x <= B makes N enough; the least N whose rounded quotas
  // fit lies between that and T_x / B.
  int64_t lo = 1, hi = 1;
  for (auto &[rank, k] : streamsAt) {
    // A step posts one message per peer, whatever its lanes.
    if (peersAt.lookup(rank) > options.maxOpsPerStep ||
        k >= options.stagingBudget)
      return std::nullopt;
    int64_t bytes = bytesAt.lookup(rank), room = options.stagingBudget - k;
    // Rounded up without forming bytes + budget - 1 (a budget may be
    // 2^63 - 1).
    lo = std::max(lo, llvm::divideCeilSigned(bytes, options.stagingBudget));
    hi = std::max(hi, llvm::divideCeilSigned(bytes, room));
  }
  auto fits = [&](int64_t n) {
    llvm::DenseMap<int64_t, int64_t> used;
    auto take = [&](int64_t rank, int64_t q) {
      int64_t &u = used[rank];
      if (q > options.stagingBudget - u)
        return false;
      u += q;
      return true;
    };
    for (const StreamContent &s : streams) {
      int64_t q = llvm::divideCeilSigned(s.bytes, n);
      if (!take(s.sender, q) ||
          !take(s.receiver, receiveCopies(s, options) * q))
        return false;
    }
    return true;
  };
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (fits(mid))
      hi = mid;
    else
      lo = mid + 1;
  }
  int64_t steps = hi;
  PlanSchedule schedule;
  schedule.stagingBudget = options.stagingBudget;
  schedule.receivesAhead = options.receivesAhead;
  schedule.maxOpsPerStep = options.maxOpsPerStep;
  // A transit forwards each step's bytes in the next step.
  for (const StreamContent &s : streams)
    schedule.streams.push_back(
        {s.sender, s.receiver, s.phase, isTransitOut(s.phase) ? 1 : 0,
         std::max<int64_t>(1, llvm::divideCeilSigned(s.bytes, steps))});
  // Holder streams' rows and their order do not change below, so neither
  // do the arrivals.
  // Relays between domains start from the holders' arrivals; relays within
  // a domain from those and the relays between domains.
  auto crossing = [&](const StreamContent &s) {
    return crossesDomains(model, s);
  };
  auto within = [&](const StreamContent &s) { return relaysWithin(model, s); };
  std::vector<StreamContent> ordered = streams;
  std::vector<Arrival> arrivals =
      streamArrivals(model, transfers, ordered, schedule);
  orderRelaysBy(arrivals, transfers, ordered, crossing);
  startRelays(model, arrivals, transfers, ordered, schedule, crossing);
  if (llvm::any_of(ordered, crossing))
    arrivals = streamArrivals(model, transfers, ordered, schedule, true);
  orderRelaysBy(arrivals, transfers, ordered, within);
  startRelays(model, arrivals, transfers, ordered, schedule, within);
  return schedule;
}
} // namespace

llvm::Expected<PlanSchedule> reshard::schedulePlan(
    const PlanModel &model, const std::vector<TransferGroup> &transfers,
    const std::vector<StreamContent> &streams, const ScheduleOptions &options) {
  auto error = [](const llvm::Twine &msg) {
    return llvm::createStringError(msg);
  };
  if (options.stagingBudget < kMinStagingBudget)
    return error(llvm::formatv("the staging budget of {0} bytes cannot hold "
                               "one 8-byte element; give at least {1}",
                               options.stagingBudget, kMinStagingBudget));
  if (options.maxOpsPerStep < 2)
    return error("a step needs room for at least 2 operations (a send and a "
                 "receive)");
  // Streams per rank, and streams and bytes as staged at once (a transit's
  // receive with its carry, and with receives ahead every receive, once
  // more: uniformSchedule).
  llvm::DenseMap<int64_t, int64_t> streamsAt, peersAt, capacity, stagedAt,
      bytesAt;
  llvm::DenseSet<std::pair<int64_t, int64_t>> pairs;
  bool transits = false;
  for (const StreamContent &s : streams) {
    ++streamsAt[s.sender];
    ++streamsAt[s.receiver];
    int64_t copies = receiveCopies(s, options);
    transits |= isTransitIn(s.phase);
    stagedAt[s.sender] += 1;
    stagedAt[s.receiver] += copies;
    std::optional<int64_t> received = llvm::checkedMul(copies, s.bytes);
    std::optional<int64_t> sent = llvm::checkedAdd(bytesAt[s.sender], s.bytes);
    if (received)
      received = llvm::checkedAdd(bytesAt[s.receiver], *received);
    if (!sent || !received)
      return error(llvm::formatv("rank {0} stages more than 2^63 bytes",
                                 sent ? s.receiver : s.sender));
    bytesAt[s.sender] = *sent;
    bytesAt[s.receiver] = *received;
    if (pairs.insert({s.sender, s.receiver}).second) {
      ++peersAt[s.sender];
      ++peersAt[s.receiver];
    }
  }
  // Plans keep per-step tables of each rank's load: a bound on the steps
  // bounds them (a rank staging 4 PiB in steps of 1 GiB). Its bytes over
  // the budget are a lower bound on its steps, checked first (the lowest
  // rank named); the schedule's own steps after.
  std::vector<std::pair<int64_t, int64_t>> staged(bytesAt.begin(),
                                                  bytesAt.end());
  llvm::sort(staged);
  for (const auto &[rank, bytes] : staged)
    if (bytes / options.stagingBudget >= kMaxRankSteps)
      return error(llvm::formatv(
          "rank {0} stages {1} bytes, {2} steps or more at the staging "
          "budget of {3} bytes, where a plan takes at most {2} a rank; "
          "raise the budget",
          rank, bytes, kMaxRankSteps, options.stagingBudget));
  auto tooLong = [&](int64_t sender, int64_t receiver, int64_t end) {
    return error(llvm::formatv(
        "the stream from rank {0} to rank {1} ends at step {2}, past the {3} "
        "steps a plan takes a rank; raise the staging budget of {4} bytes",
        sender, receiver, end, kMaxRankSteps, options.stagingBudget));
  };
  if (std::optional<PlanSchedule> uniform = uniformSchedule(
          model, transfers, streams, options, stagedAt, peersAt, bytesAt)) {
    std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> bytesOf;
    for (const StreamContent &s : streams)
      bytesOf[{s.sender, s.receiver, s.phase}] = s.bytes;
    for (const PlanStream &p : uniform->streams) {
      int64_t end =
          p.start +
          streamSteps(bytesOf[{p.sender, p.receiver, p.phase}], p.quota);
      if (end > kMaxRankSteps)
        return tooLong(p.sender, p.receiver, end);
    }
    return std::move(*uniform);
  }
  if (transits)
    return error("streams through a transit GPU need every stream at one "
                 "pace, which the staging budget or the operations per step "
                 "do not allow");
  // Streams a rank may run at once, and so each stream's quota: the budget
  // over them; with receives ahead half of it (a rank's step stages at most
  // half, its next step's receives the rest).
  int64_t room =
      options.receivesAhead ? options.stagingBudget / 2 : options.stagingBudget;
  for (auto &[rank, n] : streamsAt)
    capacity[rank] = std::min({n, options.maxOpsPerStep, room});
  PlanSchedule schedule;
  schedule.stagingBudget = options.stagingBudget;
  schedule.receivesAhead = options.receivesAhead;
  schedule.maxOpsPerStep = options.maxOpsPerStep;
  schedule.streams.resize(streams.size());
  std::vector<int64_t> steps(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamContent &s = streams[i];
    int64_t quota = room / std::max(capacity[s.sender], capacity[s.receiver]);
    schedule.streams[i] = {s.sender, s.receiver, s.phase, 0, quota};
    steps[i] = streamSteps(s.bytes, quota);
  }
  // Longest first, phase 0 before the relays that wait for it; ties in
  // (sender, receiver) order, so the result does not depend on containers.
  std::vector<size_t> order(streams.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  // Holders' streams, then relays between domains, then within.
  auto level = [&](size_t i) {
    return !isRelay(streams[i].phase)          ? 0
           : crossesDomains(model, streams[i]) ? 1
                                               : 2;
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (level(a) != level(b))
      return level(a) < level(b);
    return steps[a] > steps[b];
  });
  Occupancy busy(capacity);
  // rank -> the last step of its holder and between-domain receives
  llvm::DenseMap<int64_t, int64_t> lastReceive;
  for (size_t i : order) {
    const StreamContent &s = streams[i];
    int64_t start = 0;
    if (isRelay(s.phase)) {
      auto it = lastReceive.find(s.sender);
      start = it == lastReceive.end() ? 0 : it->second + 1;
    }
    while (true) {
      int64_t a = busy.firstFull(s.sender, start, steps[i]);
      int64_t b = busy.firstFull(s.receiver, start, steps[i]);
      if (a < 0 && b < 0)
        break;
      start = std::max(a, b) + 1;
    }
    if (steps[i] > kMaxRankSteps - start) // before busy holds the steps
      return tooLong(s.sender, s.receiver, start + steps[i]);
    busy.add(s.sender, start, steps[i]);
    busy.add(s.receiver, start, steps[i]);
    schedule.streams[i].start = start;
    if (level(i) < 2 && steps[i] > 0) {
      int64_t &last = lastReceive.try_emplace(s.receiver, -1).first->second;
      last = std::max(last, start + steps[i] - 1);
    }
  }
  std::sort(schedule.streams.begin(), schedule.streams.end());
  return schedule;
}
