//===- BoxOverlap.cpp - The first overlapping pair of many boxes ----------===//
//
// See BoxOverlap.h.
//
//===----------------------------------------------------------------------===//
#include "reshard/Layout/BoxOverlap.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <vector>

using namespace reshard;
using llvm::ArrayRef;

std::optional<std::pair<size_t, size_t>>
reshard::firstOverlap(size_t n,
                      llvm::function_ref<ArrayRef<int64_t>(size_t)> offset,
                      llvm::function_ref<ArrayRef<int64_t>(size_t)> sizes) {
  auto overlaps = [&](size_t a, size_t b) {
    ArrayRef<int64_t> oa = offset(a), sa = sizes(a), ob = offset(b),
                      sb = sizes(b);
    for (size_t d = 0; d < oa.size(); ++d)
      if (oa[d] + sa[d] <= ob[d] || ob[d] + sb[d] <= oa[d])
        return false;
    return true;
  };
  if (n <= 64) {
    for (size_t a = 0; a < n; ++a)
      for (size_t b = a + 1; b < n; ++b)
        if (overlaps(a, b))
          return std::make_pair(a, b);
    return std::nullopt;
  }
  std::optional<std::pair<size_t, size_t>> least;
  auto found = [&](size_t a, size_t b) {
    std::pair<size_t, size_t> p = std::minmax(a, b);
    if (!least || p < *least)
      least = p;
  };
  size_t rank = sizes(0).size();
  // An empty box overlaps what holds its offset strictly inside, which a
  // grid's cells cannot say: the sweep takes any pattern with one.
  bool grid = true;
  for (size_t i = 0; i < n && grid; ++i)
    grid = llvm::all_of(sizes(i), [](int64_t s) { return s > 0; });
  for (size_t d = 0; d < rank && grid; ++d) {
    std::vector<std::pair<int64_t, int64_t>> intervals;
    for (size_t i = 0; i < n; ++i)
      intervals.push_back({offset(i)[d], sizes(i)[d]});
    llvm::sort(intervals);
    intervals.erase(std::unique(intervals.begin(), intervals.end()),
                    intervals.end());
    for (size_t k = 1; k < intervals.size() && grid; ++k)
      grid = intervals[k].first >=
             intervals[k - 1].first + intervals[k - 1].second;
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i)
    order.push_back(i);
  if (grid) {
    // A box's cell: its offsets then its sizes, compared in that order.
    auto compare = [&](size_t a, size_t b) {
      for (auto part : {offset, sizes})
        for (size_t d = 0; d < rank; ++d)
          if (part(a)[d] != part(b)[d])
            return part(a)[d] < part(b)[d] ? -1 : 1;
      return 0;
    };
    llvm::sort(order, [&](size_t a, size_t b) {
      int c = compare(a, b);
      return c ? c < 0 : a < b;
    });
    for (size_t k = 1; k < order.size(); ++k)
      if (!compare(order[k - 1], order[k]))
        found(order[k - 1], order[k]);
    return least;
  }
  auto begin0 = [&](size_t i) { return offset(i)[0]; };
  llvm::sort(order, [&](size_t a, size_t b) {
    return std::make_pair(begin0(a), a) < std::make_pair(begin0(b), b);
  });
  for (size_t k = 0; k < order.size(); ++k) {
    int64_t end0 = begin0(order[k]) + sizes(order[k])[0];
    for (size_t j = k + 1; j < order.size() && begin0(order[j]) < end0; ++j)
      if (overlaps(order[k], order[j]))
        found(order[k], order[j]);
  }
  return least;
}
