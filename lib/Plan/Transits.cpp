//===- Transits.cpp - Holder streams rerouted through a third GPU ---------===//
#include "reshard/Plan/Transits.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace reshard;

namespace {
using Loads = llvm::DenseMap<int64_t, int64_t>;

/// One side of the balancing: a network stream's bytes pass one NIC of the
/// domain of `end` (its receiver for ingress, its sender for egress);
/// `far` is its other end.
struct Crossing {
  size_t stream;
  int64_t end, far, bytes;
};

/// Moves crossings off the busiest GPU of each domain to its least loaded
/// one while that lowers the busier of the two, only what the busiest GPU
/// carries for itself (a crossing moves once). Those that keep the idle
/// GPU within the domain's mean come first (the largest of them, else the
/// smallest past it), but before size, the one whose far end has seen the
/// fewest moves: a moved stream joins the idle GPU's own message to that
/// end, and under fair sharing a NIC whose messages are few and large is
/// left waiting on their senders (M2N Qwen3-235B lost 13% a step with 14
/// moves onto one receiver). `load` starts with every crossing at its own
/// end and ends as moved. Returns the GPU per crossing (in `crossings`
/// order).
std::vector<int64_t>
spread(const std::vector<Crossing> &crossings,
       const std::map<int64_t, std::vector<int64_t>> &gpusOf, Loads &load) {
  std::vector<int64_t> chosen(crossings.size());
  // Per GPU, the crossings it still carries for itself.
  std::map<int64_t, std::vector<size_t>> own;
  for (size_t i = 0; i < crossings.size(); ++i) {
    chosen[i] = crossings[i].end;
    load[crossings[i].end] += crossings[i].bytes;
    own[crossings[i].end].push_back(i);
  }
  Loads movedTo; // far end -> crossings moved that reach it
  for (const auto &[domain, gpus] : gpusOf) {
    std::set<std::pair<int64_t, int64_t>> byLoad; // (load, gpu)
    int64_t total = 0;
    for (int64_t g : gpus) {
      byLoad.insert({load.lookup(g), g});
      total += load.lookup(g);
    }
    int64_t mean = (total + gpus.size() - 1) / gpus.size();
    while (byLoad.size() > 1) {
      auto [most, busy] = *byLoad.rbegin();
      auto [least, idle] = *byLoad.begin();
      std::vector<size_t> &list = own[busy];
      // Of the moves that leave both GPUs below `most`, the first by (past
      // the mean, moves at the far end, size: largest first within the
      // mean, smallest first past it); the last of equals.
      auto best = list.end();
      std::tuple<bool, int64_t, int64_t> bestRank;
      for (auto it = list.begin(); it != list.end(); ++it) {
        int64_t bytes = crossings[*it].bytes;
        if (bytes <= 0 || least + bytes >= most)
          continue;
        bool over = least + bytes > mean;
        std::tuple<bool, int64_t, int64_t> rank = {
            over, movedTo.lookup(crossings[*it].far), over ? bytes : -bytes};
        if (best == list.end() || !(bestRank < rank)) {
          best = it;
          bestRank = rank;
        }
      }
      if (best == list.end())
        break;
      size_t i = *best;
      int64_t bytes = crossings[i].bytes;
      list.erase(best);
      ++movedTo[crossings[i].far];
      byLoad.erase({most, busy});
      byLoad.erase({least, idle});
      load[busy] = most - bytes;
      load[idle] = least + bytes;
      byLoad.insert({most - bytes, busy});
      byLoad.insert({least + bytes, idle});
      chosen[i] = idle;
    }
  }
  return chosen;
}
} // namespace

std::vector<PlanTransit>
reshard::balanceNics(const PlanModel &model,
                     const std::vector<StreamContent> &streams) {
  std::vector<PlanTransit> out;
  if (!model.topology)
    return out;
  std::map<int64_t, std::vector<int64_t>> gpusOf; // domain -> plan GPUs
  for (int64_t r : model.planRanks())
    gpusOf[model.domainOf(r)].push_back(r);
  std::vector<Crossing> in, outgoing;
  // Relay streams that cross domains (a relay tree's) stay where they are,
  // but their NICs start with their bytes.
  Loads nicIn, nicOut;
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamContent &s = streams[i];
    if (s.bytes == 0 || model.domainOf(s.sender) == model.domainOf(s.receiver))
      continue;
    if (s.phase == 0) {
      in.push_back({i, s.receiver, s.sender, s.bytes});
    } else {
      nicIn[s.receiver] += s.bytes;
      nicOut[s.sender] += s.bytes;
    }
  }
  std::vector<int64_t> entry = spread(in, gpusOf, nicIn);
  std::vector<int64_t> via(streams.size(), -1);
  for (size_t i = 0; i < in.size(); ++i) {
    const StreamContent &s = streams[in[i].stream];
    if (entry[i] != s.receiver)
      via[in[i].stream] = entry[i];
    else
      outgoing.push_back({in[i].stream, s.sender, s.receiver, s.bytes});
  }
  // Streams that enter through a transit leave through their sender.
  for (size_t i = 0; i < in.size(); ++i)
    if (via[in[i].stream] >= 0)
      nicOut[streams[in[i].stream].sender] += in[i].bytes;
  std::vector<int64_t> exit = spread(outgoing, gpusOf, nicOut);
  for (size_t i = 0; i < outgoing.size(); ++i)
    if (exit[i] != outgoing[i].end)
      via[outgoing[i].stream] = exit[i];
  for (size_t i = 0; i < streams.size(); ++i)
    if (via[i] >= 0)
      out.push_back({streams[i].sender, streams[i].receiver, via[i]});
  llvm::sort(out);
  return out;
}
