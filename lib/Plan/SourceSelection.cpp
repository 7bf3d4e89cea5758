//===- SourceSelection.cpp - Who sends each piece, and through whom -------===//
//
// Greedy balancing in decreasing size (longest processing time first): each
// network transfer goes to the holder whose NIC has sent least so far and
// enters the destination's NVLink domain at the destination rank whose NIC
// has received least. Destinations of one domain that need the same box
// share one network crossing; the entry rank forwards it over NVLink.
//
//===----------------------------------------------------------------------===//
#include "reshard/Plan/SourceSelection.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <map>

using namespace reshard;

namespace {

/// Bytes sent or received so far per rank and link.
struct Loads {
  llvm::DenseMap<int64_t, int64_t> nicOut, nicIn, nvlOut;
};

/// The holder with the least load (lowest rank on ties).
int64_t leastLoaded(llvm::ArrayRef<int64_t> ranks,
                    const llvm::DenseMap<int64_t, int64_t> &load) {
  int64_t best = ranks.front(), bestLoad = load.lookup(best);
  for (int64_t r : ranks.drop_front()) {
    int64_t l = load.lookup(r);
    if (l < bestLoad) {
      best = r;
      bestLoad = l;
    }
  }
  return best;
}

/// Destinations of one tensor in one domain that need the same box.
struct NetworkGroup {
  size_t tensor;
  std::vector<size_t> rows; // ascending
  int64_t bytes;
};

} // namespace

void reshard::selectSources(llvm::MutableArrayRef<PlannedTensor> tensors,
                            SourceStrategy strategy) {
  struct NvlinkRow {
    size_t tensor, row;
    int64_t bytes;
  };
  std::vector<NvlinkRow> nvlinkRows;
  std::vector<NetworkGroup> groups;

  for (size_t t = 0; t < tensors.size(); ++t) {
    PlannedTensor &pt = tensors[t];
    PieceTable &table = pt.table;
    // (domain, holder group, box) -> network group index
    std::map<std::vector<int64_t>, size_t> groupOf;
    for (size_t i = 0; i < table.size(); ++i) {
      PieceTable::MutablePiece p = table[i];
      llvm::ArrayRef<int64_t> holders = table.holders(p.holderGroup());
      p.setVia(-1);
      p.setStep(0);
      if (std::binary_search(holders.begin(), holders.end(), p.dstRank())) {
        p.setSrcRank(p.dstRank());
        continue;
      }
      if (strategy == SourceStrategy::Direct) {
        p.setSrcRank(holders.front());
        continue;
      }
      int64_t domain = pt.domainOf(p.dstRank());
      bool inDomain = llvm::any_of(
          holders, [&](int64_t h) { return pt.domainOf(h) == domain; });
      if (inDomain) {
        nvlinkRows.push_back({t, i, pt.pieceBytes(i)});
        continue;
      }
      std::vector<int64_t> key = {domain, p.holderGroup()};
      key.insert(key.end(), p.globalOffset().begin(), p.globalOffset().end());
      auto [it, inserted] = groupOf.try_emplace(key, groups.size());
      if (inserted)
        groups.push_back({t, {}, pt.pieceBytes(i)});
      groups[it->second].rows.push_back(i);
    }
  }
  if (strategy == SourceStrategy::Direct)
    return;

  Loads loads;
  // Largest first, then by position, so the result does not depend on
  // container order.
  std::stable_sort(
      nvlinkRows.begin(), nvlinkRows.end(),
      [](const NvlinkRow &a, const NvlinkRow &b) { return a.bytes > b.bytes; });
  for (const NvlinkRow &r : nvlinkRows) {
    PlannedTensor &pt = tensors[r.tensor];
    PieceTable::MutablePiece p = pt.table[r.row];
    int64_t domain = pt.domainOf(p.dstRank());
    llvm::SmallVector<int64_t> local;
    for (int64_t h : pt.table.holders(p.holderGroup()))
      if (pt.domainOf(h) == domain)
        local.push_back(h);
    int64_t src = leastLoaded(local, loads.nvlOut);
    loads.nvlOut[src] += r.bytes;
    p.setSrcRank(src);
  }

  std::stable_sort(groups.begin(), groups.end(),
                   [](const NetworkGroup &a, const NetworkGroup &b) {
                     return a.bytes > b.bytes;
                   });
  for (const NetworkGroup &g : groups) {
    PieceTable &table = tensors[g.tensor].table;
    llvm::SmallVector<int64_t> dsts;
    for (size_t i : g.rows)
      dsts.push_back(table[i].dstRank());
    llvm::sort(dsts); // ties go to the lowest rank, whatever the row order
    int64_t entry = leastLoaded(dsts, loads.nicIn);
    int64_t src = leastLoaded(
        table.holders(table[g.rows.front()].holderGroup()), loads.nicOut);
    loads.nicIn[entry] += g.bytes;
    loads.nicOut[src] += g.bytes;
    for (size_t i : g.rows) {
      PieceTable::MutablePiece p = table[i];
      p.setSrcRank(src);
      if (p.dstRank() == entry)
        continue;
      p.setVia(entry);
      p.setStep(1);
      loads.nvlOut[entry] += g.bytes;
    }
  }
}
