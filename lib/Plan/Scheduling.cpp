//===- Scheduling.cpp - Streams placed within a staging budget ------------===//
#include "reshard/Plan/Scheduling.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <optional>

using namespace reshard;

std::vector<StreamContent>
reshard::collectStreams(const PlanModel &model,
                        const std::vector<TransferGroup> &transfers) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, size_t> at;
  std::vector<StreamContent> streams;
  for (size_t i = 0; i < transfers.size(); ++i) {
    const TransferGroup &t = transfers[i];
    if (t.kind == TransferKind::Copy)
      continue;
    auto [it, inserted] = at.try_emplace(
        std::make_tuple(t.sender, t.receiver, t.phase()), streams.size());
    if (inserted)
      streams.push_back({t.sender, t.receiver, t.phase(), 0, {}});
    StreamContent &s = streams[it->second];
    s.bytes += t.memberCount * model.pieceBytes(t.group, t.piece);
    s.transfers.push_back(i);
  }
  std::sort(streams.begin(), streams.end(),
            [](const StreamContent &a, const StreamContent &b) {
              return std::tie(a.sender, a.receiver, a.phase) <
                     std::tie(b.sender, b.receiver, b.phase);
            });
  return streams;
}

PlanSchedule
reshard::trivialSchedule(const std::vector<StreamContent> &streams) {
  PlanSchedule s;
  s.stagingBudget = 0; // none
  for (const StreamContent &c : streams)
    s.streams.push_back({c.sender, c.receiver, c.phase, c.phase,
                         std::max<int64_t>(c.bytes, 1)});
  return s;
}

PlanSchedule reshard::scheduleOf(const PlanModel &model,
                                 const std::vector<StreamContent> &streams) {
  return model.schedule ? *model.schedule : trivialSchedule(streams);
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
/// Every stream at once, each with a share of the budget proportional to
/// its bytes: stream i between s and r moves floor(B * b_i / max(T_s, T_r))
/// bytes a step, where T_x is all the bytes of rank x's streams. A rank's
/// quotas then add up to at most B whatever overlaps, and its streams end
/// together, after about max(T_s, T_r) / B steps: the steps follow the
/// busiest ranks' bytes, not the largest stream times the stream count.
/// Phase 0 starts at step 0, a relay's streams after its last phase-0
/// receive. None when a rank has more streams than operations per step, or
/// when rounding tiny streams up to 1 byte a step would break the budget.
std::optional<PlanSchedule>
proportionalSchedule(const std::vector<StreamContent> &streams,
                     const ScheduleOptions &options,
                     const llvm::DenseMap<int64_t, int64_t> &streamsAt,
                     const llvm::DenseMap<int64_t, int64_t> &bytesAt) {
  for (auto &[rank, n] : streamsAt)
    if (n > options.maxOpsPerStep)
      return std::nullopt;
  PlanSchedule schedule;
  schedule.stagingBudget = options.stagingBudget;
  schedule.maxOpsPerStep = options.maxOpsPerStep;
  llvm::DenseMap<int64_t, int64_t> used, lastReceive;
  std::vector<int64_t> steps(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamContent &s = streams[i];
    int64_t most =
        std::max(bytesAt.lookup(s.sender), bytesAt.lookup(s.receiver));
    __int128 share = static_cast<__int128>(options.stagingBudget) * s.bytes;
    int64_t quota = most ? static_cast<int64_t>(share / most) : 1;
    quota = std::max<int64_t>(quota, 1);
    if ((used[s.sender] += quota) > options.stagingBudget ||
        (used[s.receiver] += quota) > options.stagingBudget)
      return std::nullopt;
    steps[i] = streamSteps(s.bytes, quota);
    schedule.streams.push_back({s.sender, s.receiver, s.phase, 0, quota});
    if (s.phase == 0 && steps[i] > 0) {
      int64_t &last = lastReceive.try_emplace(s.receiver, -1).first->second;
      last = std::max(last, steps[i] - 1);
    }
  }
  for (size_t i = 0; i < streams.size(); ++i)
    if (streams[i].phase == 1) {
      auto it = lastReceive.find(streams[i].sender);
      schedule.streams[i].start = it == lastReceive.end() ? 0 : it->second + 1;
    }
  return schedule;
}
} // namespace

llvm::Expected<PlanSchedule>
reshard::schedulePlan(const std::vector<StreamContent> &streams,
                      const ScheduleOptions &options) {
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
  llvm::DenseMap<int64_t, int64_t> streamsAt, capacity, bytesAt;
  for (const StreamContent &s : streams) {
    ++streamsAt[s.sender];
    ++streamsAt[s.receiver];
    bytesAt[s.sender] += s.bytes;
    bytesAt[s.receiver] += s.bytes;
  }
  if (std::optional<PlanSchedule> shared =
          proportionalSchedule(streams, options, streamsAt, bytesAt))
    return std::move(*shared);
  // Streams a rank may run at once, and so each stream's quota.
  for (auto &[rank, n] : streamsAt)
    capacity[rank] =
        std::min({n, options.maxOpsPerStep, options.stagingBudget});
  PlanSchedule schedule;
  schedule.stagingBudget = options.stagingBudget;
  schedule.maxOpsPerStep = options.maxOpsPerStep;
  schedule.streams.resize(streams.size());
  std::vector<int64_t> steps(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamContent &s = streams[i];
    int64_t quota = options.stagingBudget /
                    std::max(capacity[s.sender], capacity[s.receiver]);
    schedule.streams[i] = {s.sender, s.receiver, s.phase, 0, quota};
    steps[i] = streamSteps(s.bytes, quota);
  }
  // Longest first, phase 0 before the relays that wait for it; ties in
  // (sender, receiver) order, so the result does not depend on containers.
  std::vector<size_t> order(streams.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (streams[a].phase != streams[b].phase)
      return streams[a].phase < streams[b].phase;
    return steps[a] > steps[b];
  });
  Occupancy busy(capacity);
  llvm::DenseMap<int64_t, int64_t> lastReceive; // rank -> last phase-0 step
  for (size_t i : order) {
    const StreamContent &s = streams[i];
    int64_t start = 0;
    if (s.phase == 1) {
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
    busy.add(s.sender, start, steps[i]);
    busy.add(s.receiver, start, steps[i]);
    schedule.streams[i].start = start;
    if (s.phase == 0 && steps[i] > 0) {
      int64_t &last = lastReceive.try_emplace(s.receiver, -1).first->second;
      last = std::max(last, start + steps[i] - 1);
    }
  }
  std::sort(schedule.streams.begin(), schedule.streams.end());
  return schedule;
}
