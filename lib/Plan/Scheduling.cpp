//===- Scheduling.cpp - Steps within a staging budget ---------------------===//
//
// Every transfer between two ranks is packed into the sender's staging
// memory and received into the receiver's, so a step may use at most the
// staging budget on each rank (sends plus receives) and at most a bounded
// number of point-to-point operations per rank (one NCCL group per step).
// Pieces larger than the budget are first split along their outer dims.
// Transfers are then placed first-fit, largest first, in the earliest step
// where both ends have room; a relay forward goes after the step in which
// its entry rank received the box.
//
//===----------------------------------------------------------------------===//
#include "reshard/Plan/Scheduling.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <climits>
#include <map>

using namespace reshard;

namespace {

/// Most pieces a scheduled plan may have (about 6 GiB of piece rows).
constexpr int64_t kMaxScheduledPieces = int64_t(1) << 26;

/// Sub-boxes of a box (offsets relative to it, and sizes) of at most
/// `budget` bytes each: whole slabs of the outermost dim that fit, else one
/// slab at a time split along the next dim.
void splitBox(llvm::ArrayRef<int64_t> sizes, int64_t elementBytes,
              int64_t budget, unsigned dim, llvm::SmallVector<int64_t> &offset,
              std::vector<std::pair<llvm::SmallVector<int64_t>,
                                    llvm::SmallVector<int64_t>>> &out) {
  int64_t inner = elementBytes;
  for (size_t d = dim + 1; d < sizes.size(); ++d)
    inner *= sizes[d];
  if (dim == sizes.size() || inner * sizes[dim] <= budget) {
    llvm::SmallVector<int64_t> sub(sizes.begin(), sizes.end());
    for (unsigned d = 0; d < dim; ++d)
      sub[d] = 1;
    out.push_back({offset, sub});
    return;
  }
  if (inner <= budget) {
    int64_t per = budget / inner;
    for (int64_t k = 0; k < sizes[dim]; k += per) {
      llvm::SmallVector<int64_t> sub(sizes.begin(), sizes.end());
      for (unsigned d = 0; d < dim; ++d)
        sub[d] = 1;
      sub[dim] = std::min(per, sizes[dim] - k);
      offset[dim] = k;
      out.push_back({offset, sub});
    }
    offset[dim] = 0;
    return;
  }
  for (int64_t k = 0; k < sizes[dim]; ++k) {
    offset[dim] = k;
    splitBox(sizes, elementBytes, budget, dim + 1, offset, out);
  }
  offset[dim] = 0;
}

/// How many sub-boxes splitBox makes (saturating at INT64_MAX).
int64_t countSplit(llvm::ArrayRef<int64_t> sizes, int64_t elementBytes,
                   int64_t budget, unsigned dim) {
  int64_t inner = elementBytes;
  for (size_t d = dim + 1; d < sizes.size(); ++d)
    inner *= sizes[d];
  if (dim == sizes.size() || inner * sizes[dim] <= budget)
    return 1;
  if (inner <= budget) {
    int64_t per = budget / inner;
    return sizes[dim] / per + (sizes[dim] % per != 0);
  }
  std::optional<int64_t> total = llvm::checkedMul(
      sizes[dim], countSplit(sizes, elementBytes, budget, dim + 1));
  return total ? *total : INT64_MAX;
}

/// Replaces every piece of more than `budget` bytes by its sub-boxes.
void splitLargePieces(PlannedTensor &pt, int64_t budget) {
  const PieceTable &table = pt.table;
  auto tooLarge = [&](size_t i) {
    return pt.pieceBytes(i) > budget &&
           table[i].srcRank() != table[i].dstRank();
  };
  bool any = false;
  for (size_t i = 0; i < table.size() && !any; ++i)
    any = tooLarge(i);
  if (!any)
    return;
  unsigned rank = table.rank();
  PieceTable split(rank);
  split.holderOffsets = table.holderOffsets;
  split.holderRanks = table.holderRanks;
  split.rows.reserve(table.rows.size());
  llvm::SmallVector<int64_t> gOff(rank), dOff(rank), sOff(rank);
  for (size_t i = 0; i < table.size(); ++i) {
    PieceTable::Piece p = table[i];
    std::vector<
        std::pair<llvm::SmallVector<int64_t>, llvm::SmallVector<int64_t>>>
        subs;
    llvm::SmallVector<int64_t> zero(rank, 0);
    if (tooLarge(i))
      splitBox(p.sizes(), pt.layout.elementBytes, budget, 0, zero, subs);
    else
      subs.push_back({zero, llvm::SmallVector<int64_t>(p.sizes())});
    for (auto &[delta, sizes] : subs) {
      for (unsigned d = 0; d < rank; ++d) {
        gOff[d] = p.globalOffset()[d] + delta[d];
        dOff[d] = p.dstOffset()[d] + delta[d];
        sOff[d] = p.srcOffset()[d] + delta[d];
      }
      split.addPiece(p.dstRank(), p.srcRank(), p.holderGroup(), gOff, sizes,
                     dOff, sOff, p.via(), p.step());
    }
  }
  pt.table = std::move(split);
}

/// Per-rank, per-step staging bytes and peers.
class StepLoads {
public:
  StepLoads(const ScheduleOptions &o) : options(o) {}

  bool fits(int64_t from, int64_t to, int64_t bytes, int64_t step) {
    State &s = at(from, step), &r = at(to, step);
    if (s.staging + bytes > options.stagingBudget ||
        r.staging + bytes > options.stagingBudget)
      return false;
    bool newSend = !s.sendPeers.count(to), newRecv = !r.recvPeers.count(from);
    return s.ops() + newSend <= options.maxOpsPerStep &&
           r.ops() + newRecv <= options.maxOpsPerStep;
  }
  void add(int64_t from, int64_t to, int64_t bytes, int64_t step) {
    State &s = at(from, step), &r = at(to, step);
    s.staging += bytes;
    r.staging += bytes;
    s.sendPeers.insert(to);
    r.recvPeers.insert(from);
    advance(from);
    advance(to);
  }
  /// The first step in which `rank` can still take a new peer and a byte:
  /// no transfer to a new peer fits before it, so placement starts there
  /// (a transfer to a peer it already has might have fitted earlier; that
  /// only costs optimality, and keeps placement near linear).
  int64_t firstOpen(int64_t rank) { return hint.lookup(rank); }

private:
  struct State {
    int64_t staging = 0;
    llvm::SmallDenseSet<int64_t, 8> sendPeers, recvPeers;
    int64_t ops() const { return sendPeers.size() + recvPeers.size(); }
  };
  void advance(int64_t rank) {
    int64_t &h = hint[rank];
    while (true) {
      State &st = at(rank, h);
      if (st.staging < options.stagingBudget &&
          st.ops() < options.maxOpsPerStep)
        break;
      ++h;
    }
  }
  State &at(int64_t rank, int64_t step) {
    std::vector<State> &steps = perRank[rank];
    if (steps.size() <= static_cast<size_t>(step))
      steps.resize(step + 1);
    return steps[step];
  }
  const ScheduleOptions &options;
  llvm::DenseMap<int64_t, std::vector<State>> perRank;
  llvm::DenseMap<int64_t, int64_t> hint;
};

struct Transfer {
  size_t tensor, row;
  int64_t bytes;
};

} // namespace

llvm::Error reshard::schedulePlan(llvm::MutableArrayRef<PlannedTensor> tensors,
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
  // Refuse budgets that would shatter the plan into more pieces than it can
  // hold, before splitting anything.
  std::optional<int64_t> afterSplit = 0;
  for (PlannedTensor &pt : tensors)
    for (size_t i = 0; i < pt.table.size(); ++i) {
      PieceTable::Piece p = pt.table[i];
      int64_t parts = pt.pieceBytes(i) <= options.stagingBudget ||
                              p.srcRank() == p.dstRank()
                          ? 1
                          : countSplit(p.sizes(), pt.layout.elementBytes,
                                       options.stagingBudget, 0);
      afterSplit = llvm::checkedAdd(*afterSplit, parts);
      if (!afterSplit || *afterSplit > kMaxScheduledPieces)
        return error(llvm::formatv("fitting the pieces into a staging budget "
                                   "of {0} bytes would make more than {1} "
                                   "pieces (tensor '{2}' alone needs {3}); "
                                   "raise staging-budget",
                                   options.stagingBudget, kMaxScheduledPieces,
                                   pt.layout.name, parts));
    }
  for (PlannedTensor &pt : tensors)
    splitLargePieces(pt, options.stagingBudget);

  std::vector<Transfer> direct, forwards;
  for (size_t t = 0; t < tensors.size(); ++t) {
    PieceTable &table = tensors[t].table;
    for (size_t i = 0; i < table.size(); ++i) {
      PieceTable::MutablePiece p = table[i];
      p.setStep(0);
      if (p.isLocalCopy())
        continue; // no staging, step 0
      (p.via() == -1 ? direct : forwards)
          .push_back({t, i, tensors[t].pieceBytes(i)});
    }
  }
  auto bySize = [](const Transfer &a, const Transfer &b) {
    return a.bytes > b.bytes;
  };
  std::stable_sort(direct.begin(), direct.end(), bySize);
  std::stable_sort(forwards.begin(), forwards.end(), bySize);

  StepLoads loads(options);
  auto place = [&](const Transfer &x, int64_t from, int64_t firstStep) {
    int64_t to = tensors[x.tensor].table[x.row].dstRank();
    int64_t step =
        std::max({firstStep, loads.firstOpen(from), loads.firstOpen(to)});
    while (!loads.fits(from, to, x.bytes, step))
      ++step;
    loads.add(from, to, x.bytes, step);
    tensors[x.tensor].table[x.row].setStep(step);
  };
  for (const Transfer &x : direct)
    place(x, tensors[x.tensor].table[x.row].srcRank(), 0);

  // A forward follows the step in which its entry rank received the box.
  std::vector<std::map<std::vector<int64_t>, int64_t>> receivedAt(
      tensors.size());
  for (size_t t = 0; t < tensors.size(); ++t) {
    const PieceTable &table = tensors[t].table;
    for (size_t i = 0; i < table.size(); ++i) {
      PieceTable::Piece p = table[i];
      if (p.via() != -1)
        continue;
      std::vector<int64_t> key = {p.dstRank()};
      key.insert(key.end(), p.globalOffset().begin(), p.globalOffset().end());
      receivedAt[t][key] = p.step();
    }
  }
  for (const Transfer &x : forwards) {
    PieceTable::Piece p = tensors[x.tensor].table[x.row];
    std::vector<int64_t> key = {p.via()};
    key.insert(key.end(), p.globalOffset().begin(), p.globalOffset().end());
    auto it = receivedAt[x.tensor].find(key);
    if (it == receivedAt[x.tensor].end())
      return error(llvm::formatv("tensor '{0}': rank {1} relays a box it "
                                 "does not receive",
                                 tensors[x.tensor].layout.name, p.via()));
    place(x, p.via(), it->second + 1);
  }
  return llvm::Error::success();
}
