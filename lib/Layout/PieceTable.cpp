//===- PieceTable.cpp - Appending and ordering pieces ---------------------===//
#include "reshard/Layout/PieceTable.h"

#include <algorithm>
#include <numeric>

using namespace reshard;

int64_t PieceTable::addHolderGroup(llvm::ArrayRef<int64_t> ranks) {
  holderRanks.insert(holderRanks.end(), ranks.begin(), ranks.end());
  holderOffsets.push_back(holderRanks.size());
  return holderOffsets.size() - 2;
}

void PieceTable::addPiece(int64_t dstRank, int64_t srcRank, int64_t group,
                          llvm::ArrayRef<int64_t> globalOffset,
                          llvm::ArrayRef<int64_t> sizes,
                          llvm::ArrayRef<int64_t> dstOffset,
                          llvm::ArrayRef<int64_t> srcOffset, int64_t via,
                          int64_t step) {
  rows.insert(rows.end(), {dstRank, srcRank, group, via, step});
  for (llvm::ArrayRef<int64_t> dims :
       {globalOffset, sizes, dstOffset, srcOffset})
    rows.insert(rows.end(), dims.begin(), dims.end());
}

void PieceTable::sortByDestination() {
  // Rows grouped by destination rank read (and print) as per-rank programs;
  // the stable order keeps each rank's boxes in global order.
  size_t n = size(), width = rowWidth(tensorRank);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return (*this)[a].dstRank() < (*this)[b].dstRank();
  });
  std::vector<int64_t> sorted;
  sorted.reserve(rows.size());
  for (size_t i : order)
    sorted.insert(sorted.end(), rows.begin() + i * width,
                  rows.begin() + (i + 1) * width);
  rows = std::move(sorted);
}
