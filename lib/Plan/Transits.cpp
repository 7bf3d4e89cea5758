//===- Transits.cpp - Holder streams rerouted through a third GPU ---------===//
#include "reshard/Plan/Transits.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <set>

using namespace reshard;

namespace {
using Loads = llvm::DenseMap<int64_t, int64_t>;

/// One side of the balancing: a network stream's bytes pass one NIC of the
/// domain of `end` (its receiver for ingress, its sender for egress).
struct Crossing {
  size_t stream;
  int64_t end, bytes;
};

/// Moves crossings off the busiest GPU of each domain to its least loaded
/// one while that lowers the busier of the two: the largest that keeps the
/// idle GPU within the domain's mean (else the smallest), only what the
/// busiest GPU carries for itself (a crossing moves once). `load`
/// starts with every crossing at its own end and ends as moved. Returns
/// the GPU per crossing (in `crossings` order).
std::vector<int64_t>
spread(const std::vector<Crossing> &crossings,
       const std::map<int64_t, std::vector<int64_t>> &gpusOf, Loads &load) {
  std::vector<int64_t> chosen(crossings.size());
  // Per GPU, its own crossings, smallest first (the largest is popped).
  std::map<int64_t, std::vector<std::pair<int64_t, size_t>>> own;
  for (size_t i = 0; i < crossings.size(); ++i) {
    chosen[i] = crossings[i].end;
    load[crossings[i].end] += crossings[i].bytes;
    own[crossings[i].end].push_back({crossings[i].bytes, i});
  }
  for (auto &[gpu, list] : own)
    llvm::sort(list);
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
      std::vector<std::pair<int64_t, size_t>> &list = own[busy];
      // The largest own crossing that does not lift the idle GPU past the
      // domain's mean, else the smallest, if it leaves both below `most`.
      auto fit = std::upper_bound(
          list.begin(), list.end(),
          std::make_pair(std::max<int64_t>(mean - least, 0), SIZE_MAX));
      if (fit != list.begin())
        --fit;
      if (fit == list.end() || fit->first == 0 || least + fit->first >= most)
        break;
      int64_t bytes = fit->first;
      size_t i = fit->second;
      list.erase(fit);
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
  for (size_t i = 0; i < streams.size(); ++i) {
    const StreamContent &s = streams[i];
    if (s.phase != 0 || s.bytes == 0 ||
        model.domainOf(s.sender) == model.domainOf(s.receiver))
      continue;
    in.push_back({i, s.receiver, s.bytes});
  }
  Loads nicIn, nicOut;
  std::vector<int64_t> entry = spread(in, gpusOf, nicIn);
  std::vector<int64_t> via(streams.size(), -1);
  for (size_t i = 0; i < in.size(); ++i) {
    const StreamContent &s = streams[in[i].stream];
    if (entry[i] != s.receiver)
      via[in[i].stream] = entry[i];
    else
      outgoing.push_back({in[i].stream, s.sender, s.bytes});
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
