//===- BoxOverlap.cpp - An overlapping pair of many boxes -----------------===//
//
// See BoxOverlap.h. Past 64 boxes the search splits the dims in two. Along
// a grid dim any two boxes' intervals are equal or disjoint, so boxes with
// different intervals there never meet: boxes are grouped by their grid
// intervals, and only a group's boxes are compared, along the other (free)
// dims. One free dim is a sort; two are a sweep with an ordered set of the
// boxes it crosses, which are disjoint along the second dim once no
// overlap has been found. Both are n log n whatever the pattern. With
// three or more, a group is first grouped again by its own grid dims;
// then a group that tiles its bounds (as every valid plan's does) is
// cleared by summing signed corners, and any other is swept along the dim
// that crosses fewest boxes, each box compared with those it crosses
// (quadratic at worst, for a plan that is wrong).
//
//===----------------------------------------------------------------------===//
#include "reshard/Layout/BoxOverlap.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <tuple>
#include <vector>

using namespace reshard;
using llvm::ArrayRef;

namespace {

using Pair = std::pair<size_t, size_t>;
using Extents = llvm::function_ref<ArrayRef<int64_t>(size_t)>;

struct Search {
  Extents offset, sizes;

  int64_t begin(size_t i, size_t d) const { return offset(i)[d]; }
  int64_t end(size_t i, size_t d) const { return offset(i)[d] + sizes(i)[d]; }
  bool empty(size_t i) const {
    return llvm::any_of(sizes(i), [](int64_t s) { return s <= 0; });
  }
  bool overlap(size_t a, size_t b) const {
    if (empty(a) || empty(b))
      return false;
    for (size_t d = 0, e = offset(a).size(); d < e; ++d)
      if (end(a, d) <= begin(b, d) || end(b, d) <= begin(a, d))
        return false;
    return true;
  }
  static Pair ordered(size_t a, size_t b) { return std::minmax(a, b); }

  // Whether along dim d any two of `boxes` have equal or disjoint intervals.
  bool isGridDim(ArrayRef<size_t> boxes, size_t d) const {
    std::vector<std::pair<int64_t, int64_t>> intervals;
    for (size_t i : boxes)
      intervals.push_back({begin(i, d), end(i, d)});
    llvm::sort(intervals);
    intervals.erase(std::unique(intervals.begin(), intervals.end()),
                    intervals.end());
    for (size_t k = 1; k < intervals.size(); ++k)
      if (intervals[k].first < intervals[k - 1].second)
        return false;
    return true;
  }

  // Boxes in order of their begin along d, ties by index.
  void sortByBegin(std::vector<size_t> &boxes, size_t d) const {
    llvm::sort(boxes, [&](size_t a, size_t b) {
      return std::make_pair(begin(a, d), a) < std::make_pair(begin(b, d), b);
    });
  }

  // One free dim: sorted by begin, a box overlaps an earlier one iff it
  // begins before the furthest end so far.
  std::optional<Pair> alongOne(std::vector<size_t> boxes, size_t d) const {
    sortByBegin(boxes, d);
    size_t furthest = boxes.front();
    for (size_t b : ArrayRef(boxes).drop_front()) {
      if (begin(b, d) < end(furthest, d))
        return ordered(furthest, b);
      furthest = b; // begins at or past the furthest end, so ends further
    }
    return std::nullopt;
  }

  // Two free dims: sweep along x. The boxes the sweep crosses all hold its
  // position, so with no overlap yet their y intervals are disjoint, kept
  // by begin: the one beginning last before a new box's y end is the only
  // one that can reach into it.
  std::optional<Pair> alongTwo(std::vector<size_t> boxes, size_t x,
                               size_t y) const {
    sortByBegin(boxes, x);
    std::map<int64_t, size_t> crossed;           // y begin -> box
    using Leaving = std::pair<int64_t, int64_t>; // x end, y begin
    std::priority_queue<Leaving, std::vector<Leaving>, std::greater<>> leave;
    for (size_t b : boxes) {
      while (!leave.empty() && leave.top().first <= begin(b, x)) {
        crossed.erase(leave.top().second);
        leave.pop();
      }
      auto next = crossed.lower_bound(end(b, y));
      if (next != crossed.begin() &&
          end(std::prev(next)->second, y) > begin(b, y))
        return ordered(std::prev(next)->second, b);
      crossed.emplace(begin(b, y), b);
      leave.push({end(b, x), begin(b, y)});
    }
    return std::nullopt;
  }

  // Sum over boxes of the boxes a sweep along d crosses when it meets them.
  uint64_t sweepCost(ArrayRef<size_t> boxes, size_t d) const {
    std::vector<int64_t> begins, ends;
    for (size_t i : boxes) {
      begins.push_back(begin(i, d));
      ends.push_back(end(i, d));
    }
    llvm::sort(begins);
    llvm::sort(ends);
    uint64_t cost = 0;
    for (size_t k = 0; k < begins.size(); ++k)
      cost += k - (llvm::upper_bound(ends, begins[k]) - ends.begin());
    return cost;
  }

  // Whether the boxes tile their bounding box along `free` exactly, then
  // disjoint: a box's indicator has a mixed difference of +-1 at its 2^f
  // corners, which determines it, so the boxes tile the bounds iff their
  // signed corners add up to the bounds' own. False past 2^24 corners
  // (128 MiB to sort; 2M boxes of three dims).
  bool tileTheirBounds(ArrayRef<size_t> boxes, ArrayRef<size_t> free) const {
    size_t f = free.size();
    if (f > 20 || ((boxes.size() + 1) << f) > (size_t(1) << 24))
      return false;
    std::vector<int64_t> lo(f), hi(f);
    for (size_t k = 0; k < f; ++k) {
      lo[k] = begin(boxes[0], free[k]);
      hi[k] = end(boxes[0], free[k]);
      for (size_t b : boxes) {
        lo[k] = std::min(lo[k], begin(b, free[k]));
        hi[k] = std::max(hi[k], end(b, free[k]));
      }
    }
    // A corner is (i, mask): the upper end along free[k] where bit k is
    // set, of boxes[i], or of the bounds for i == boxes.size(), which
    // count with the opposite sign so that a tiling sums to 0 everywhere.
    size_t bounds = boxes.size();
    auto coord = [&](const std::pair<uint32_t, uint32_t> &c, size_t k) {
      bool upper = c.second >> k & 1;
      if (c.first == bounds)
        return upper ? hi[k] : lo[k];
      return upper ? end(boxes[c.first], free[k])
                   : begin(boxes[c.first], free[k]);
    };
    auto sign = [&](const std::pair<uint32_t, uint32_t> &c) {
      int64_t s = llvm::popcount(c.second) % 2 ? -1 : 1;
      return c.first == bounds ? -s : s;
    };
    std::vector<std::pair<uint32_t, uint32_t>> corners;
    corners.reserve((bounds + 1) << f);
    for (uint32_t i = 0; i <= bounds; ++i)
      for (uint32_t mask = 0; mask < (uint32_t(1) << f); ++mask)
        corners.push_back({i, mask});
    auto less = [&](const auto &a, const auto &b) {
      for (size_t k = 0; k < f; ++k)
        if (coord(a, k) != coord(b, k))
          return coord(a, k) < coord(b, k);
      return false;
    };
    llvm::sort(corners, less);
    for (size_t i = 0; i < corners.size();) {
      int64_t sum = 0;
      size_t j = i;
      for (; j < corners.size() && !less(corners[i], corners[j]); ++j)
        sum += sign(corners[j]);
      if (sum != 0)
        return false;
      i = j;
    }
    return true;
  }

  // Three or more free dims: a tiling of the group's bounds (every valid
  // plan's) is cleared by its corners; else a sweep along the dim that
  // crosses fewest boxes compares each box with those it crosses
  // (quadratic at worst: only a plan that is wrong can take that long).
  std::optional<Pair> alongMany(std::vector<size_t> boxes,
                                ArrayRef<size_t> free) const {
    size_t x = free[0];
    uint64_t cost = sweepCost(boxes, x);
    for (size_t d : free.drop_front())
      if (uint64_t c = sweepCost(boxes, d); c < cost)
        std::tie(x, cost) = std::make_pair(d, c);
    if (cost > 32 * boxes.size() && tileTheirBounds(boxes, free))
      return std::nullopt;
    sortByBegin(boxes, x);
    std::vector<size_t> crossed;
    for (size_t b : boxes) {
      llvm::erase_if(crossed,
                     [&](size_t a) { return end(a, x) <= begin(b, x); });
      for (size_t a : crossed)
        if (overlap(a, b))
          return ordered(a, b);
      crossed.push_back(b);
    }
    return std::nullopt;
  }

  // Boxes grouped by their intervals along the dims of `dims` where any
  // two are equal or disjoint (there a begin names an interval); each
  // group searched along the others.
  std::optional<Pair> search(std::vector<size_t> boxes,
                             ArrayRef<size_t> dims) const {
    std::vector<size_t> grid, free;
    for (size_t d : dims)
      (isGridDim(boxes, d) ? grid : free).push_back(d);
    auto compare = [&](size_t a, size_t b) {
      for (size_t d : grid)
        if (begin(a, d) != begin(b, d))
          return begin(a, d) < begin(b, d) ? -1 : 1;
      return 0;
    };
    llvm::sort(boxes, [&](size_t a, size_t b) {
      int c = compare(a, b);
      return c ? c < 0 : a < b;
    });
    for (size_t first = 0; first < boxes.size();) {
      size_t last = first + 1;
      while (last < boxes.size() && !compare(boxes[first], boxes[last]))
        ++last;
      if (auto pair = inGroup({boxes.begin() + first, boxes.begin() + last},
                              free, !grid.empty()))
        return pair;
      first = last;
    }
    return std::nullopt;
  }

  // A group's boxes along its free dims; with three or more, the group
  // may have grid dims of its own that the whole set has not.
  std::optional<Pair> inGroup(std::vector<size_t> boxes, ArrayRef<size_t> free,
                              bool regroup) const {
    if (boxes.size() < 2)
      return std::nullopt;
    if (free.empty())
      return ordered(boxes[0], boxes[1]); // the same cell
    if (free.size() == 1)
      return alongOne(std::move(boxes), free[0]);
    if (free.size() == 2)
      return alongTwo(std::move(boxes), free[0], free[1]);
    if (regroup)
      return search(std::move(boxes), free);
    return alongMany(std::move(boxes), free);
  }
};

} // namespace

std::optional<std::pair<size_t, size_t>>
reshard::firstOverlap(size_t n, Extents offset, Extents sizes) {
  Search s{offset, sizes};
  if (n <= 64) {
    for (size_t a = 0; a < n; ++a)
      for (size_t b = a + 1; b < n; ++b)
        if (s.overlap(a, b))
          return std::make_pair(a, b);
    return std::nullopt;
  }
  std::vector<size_t> boxes;
  for (size_t i = 0; i < n; ++i)
    if (!s.empty(i))
      boxes.push_back(i);
  if (boxes.size() < 2)
    return std::nullopt;
  std::vector<size_t> dims(sizes(boxes[0]).size());
  std::iota(dims.begin(), dims.end(), 0);
  return s.search(std::move(boxes), dims);
}

std::optional<TilingFault> reshard::findTilingFault(size_t n, Extents offset,
                                                    Extents sizes,
                                                    int64_t shardElements) {
  TilingFault fault;
  for (size_t i = 0; i < n && !fault.more; ++i) {
    int64_t elements = 1;
    for (int64_t s : sizes(i))
      elements *= s; // a box inside the shard
    if (elements > shardElements - fault.covered)
      fault.more = true;
    else
      fault.covered += elements;
  }
  if (!fault.more && fault.covered < shardElements)
    return fault;
  // Not more and not fewer: exactly the shard's count.
  fault.overlap = firstOverlap(n, offset, sizes);
  if (fault.overlap || fault.more)
    return fault;
  return std::nullopt;
}
