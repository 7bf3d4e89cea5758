//===- BoxOverlapTest.cpp - firstOverlap against all pairs ----------------===//
//
// firstOverlap finds an overlapping pair without comparing all pairs past
// 64 boxes (grouped by grid dims, then a sort, an ordered sweep or a
// sweep along the other dims): checked against the pairwise answer on
// random grids, random boxes, random tilings of one to four dims with one
// box moved, and on 100,000-box patterns a dim-0 sweep took quadratic time
// on.
//
//===----------------------------------------------------------------------===//
#include "reshard/Layout/BoxOverlap.h"

#include "gtest/gtest.h"

#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace reshard;

namespace {

struct Boxes {
  std::vector<std::vector<int64_t>> offsets, sizes;

  std::optional<std::pair<size_t, size_t>> first() const {
    return firstOverlap(
        offsets.size(), [&](size_t i) { return llvm::ArrayRef(offsets[i]); },
        [&](size_t i) { return llvm::ArrayRef(sizes[i]); });
  }
  bool overlap(size_t a, size_t b) const {
    for (size_t d = 0; d < offsets[a].size(); ++d)
      if (sizes[a][d] <= 0 || sizes[b][d] <= 0 ||
          offsets[a][d] >= offsets[b][d] + sizes[b][d] ||
          offsets[b][d] >= offsets[a][d] + sizes[a][d])
        return false;
    return true;
  }
  std::optional<std::pair<size_t, size_t>> allPairs() const {
    for (size_t a = 0; a < offsets.size(); ++a)
      for (size_t b = a + 1; b < offsets.size(); ++b)
        if (overlap(a, b))
          return std::make_pair(a, b);
    return std::nullopt;
  }
  // firstOverlap agrees with all pairs: the least pair up to 64 boxes,
  // else an overlapping pair exactly when there is one.
  void check(const std::string &what) const {
    std::optional<std::pair<size_t, size_t>> got = first(), least = allPairs();
    if (offsets.size() <= 64) {
      EXPECT_EQ(got, least) << what;
      return;
    }
    ASSERT_EQ(got.has_value(), least.has_value()) << what;
    if (got) {
      EXPECT_LT(got->first, got->second) << what;
      EXPECT_LT(got->second, offsets.size()) << what;
      EXPECT_TRUE(overlap(got->first, got->second)) << what;
    }
  }
};

// A cols x rows grid of cells, in a random order, with `extra` cells
// drawn again (duplicates overlap).
Boxes grid(std::mt19937 &rng, int rows, int cols, int extra) {
  Boxes b;
  std::vector<std::pair<int, int>> cells;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c)
      cells.push_back({r, c});
  for (int k = 0; k < extra; ++k)
    cells.push_back(cells[rng() % (rows * cols)]);
  std::shuffle(cells.begin(), cells.end(), rng);
  for (auto [r, c] : cells) {
    b.offsets.push_back({r * 3, c * 5});
    b.sizes.push_back({3, 5});
  }
  return b;
}

TEST(BoxOverlap, GridsAgreeWithAllPairs) {
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    Boxes b = grid(rng, 1 + rng() % 12, 1 + rng() % 12, round % 3);
    b.check("round " + std::to_string(round));
  }
}

TEST(BoxOverlap, RandomBoxesAgreeWithAllPairs) {
  std::mt19937 rng(11);
  for (int round = 0; round < 200; ++round) {
    Boxes b;
    int n = 1 + rng() % 150, rank = 1 + rng() % 3, span = 10 + rng() % 400;
    for (int i = 0; i < n; ++i) {
      std::vector<int64_t> o, s;
      for (int d = 0; d < rank; ++d) {
        o.push_back(rng() % span);
        s.push_back(rng() % 4); // some empty: see EmptyBoxes
      }
      b.offsets.push_back(o);
      b.sizes.push_back(s);
    }
    b.check("round " + std::to_string(round));
  }
}

TEST(BoxOverlap, EmptyBoxesOverlapNothing) {
  // An empty box holds no element: not even a box holding its offset
  // overlaps it, and it does not spoil the grid of the others.
  std::mt19937 rng(3);
  for (int round = 0; round < 40; ++round) {
    Boxes b = grid(rng, 1 + rng() % 10, 7 + rng() % 10, round % 3 == 0);
    b.offsets.push_back({1000, 1000});
    b.sizes.push_back({0, 5});
    b.offsets.push_back({1000, 1000});
    b.sizes.push_back({0, 5});
    b.offsets.push_back({4, 6}); // inside the cell at (3, 5)
    b.sizes.push_back({0, 0});
    b.offsets.push_back({4, 2}); // across cells, but empty
    b.sizes.push_back({7, 0});
    b.check("round " + std::to_string(round));
  }
}

TEST(BoxOverlap, ATilingWithOneBoxMoved) {
  // 100 rows of one column, then row 57 moved half a row: it alone
  // overlaps its two neighbours, found by the sweep (no longer a grid).
  Boxes b;
  for (int r = 0; r < 100; ++r) {
    b.offsets.push_back({r * 4, 0});
    b.sizes.push_back({4, 8});
  }
  EXPECT_EQ(b.first(), std::nullopt);
  b.offsets[57][0] += 2;
  EXPECT_EQ(b.first(), b.allPairs());
  EXPECT_EQ(b.first(),
            std::make_optional(std::make_pair(size_t(57), size_t(58))));
}

// A random tiling of a box of `extents`: split along a random dim at a
// random place until pieces are small (not a grid: splits differ per
// piece), in a random order.
Boxes tiling(std::mt19937 &rng, std::vector<int64_t> extents, size_t pieces) {
  Boxes b;
  b.offsets.push_back(std::vector<int64_t>(extents.size(), 0));
  b.sizes.push_back(extents);
  for (size_t tries = 0; b.offsets.size() < pieces && tries < 20 * pieces;
       ++tries) {
    size_t i = rng() % b.offsets.size(), d = rng() % extents.size();
    int64_t size = b.sizes[i][d];
    if (size < 2)
      continue;
    int64_t cut = 1 + rng() % (size - 1);
    b.offsets.push_back(b.offsets[i]);
    b.sizes.push_back(b.sizes[i]);
    b.offsets.back()[d] += cut;
    b.sizes.back()[d] = size - cut;
    b.sizes[i][d] = cut;
  }
  std::vector<size_t> order(b.offsets.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  Boxes shuffled;
  for (size_t i : order) {
    shuffled.offsets.push_back(b.offsets[i]);
    shuffled.sizes.push_back(b.sizes[i]);
  }
  return shuffled;
}

TEST(BoxOverlap, RandomTilingsAndOneBoxMovedOrGrown) {
  // One to four dims that are not a grid's: each a sort, a sweep with an
  // ordered set, or a sweep comparing the boxes it crosses.
  std::mt19937 rng(19);
  for (int round = 0; round < 300; ++round) {
    size_t rank = 1 + round % 4;
    std::vector<int64_t> extents;
    for (size_t d = 0; d < rank; ++d)
      extents.push_back(8 + rng() % 40);
    Boxes b = tiling(rng, extents, 65 + rng() % 200);
    std::string what = "round " + std::to_string(round);
    EXPECT_EQ(b.first(), std::nullopt) << what;
    size_t i = rng() % b.offsets.size(), d = rng() % rank;
    if (round % 2)
      b.offsets[i][d] += (round % 4 == 1 ? 1 : -1);
    else
      b.sizes[i][d] += 1;
    b.check(what);
  }
}

TEST(BoxOverlap, ManyBoxesAlongOneOrTwoFreeDims) {
  // The patterns a dim-0 sweep took quadratic time on: a row of n unit
  // boxes beside one long box, and n columns beside one short column.
  // Found or cleared in n log n now (run without all pairs).
  const int64_t n = 100000;
  Boxes row;
  for (int64_t c = 0; c < n; ++c) {
    row.offsets.push_back({0, c});
    row.sizes.push_back({1, 1});
  }
  row.offsets.push_back({1, 0});
  row.sizes.push_back({1, n});
  EXPECT_EQ(row.first(), std::nullopt);
  row.offsets.back()[0] = 0;
  row.sizes.back() = {1, 2};
  std::optional<std::pair<size_t, size_t>> got = row.first();
  ASSERT_TRUE(got);
  EXPECT_TRUE(row.overlap(got->first, got->second));

  Boxes columns;
  for (int64_t c = 0; c < n; ++c) {
    columns.offsets.push_back({0, c});
    columns.sizes.push_back({n, 1});
  }
  columns.offsets.push_back({0, n}); // a short column: dim 0 is no grid
  columns.sizes.push_back({n / 2, 1});
  columns.offsets.push_back({n / 2, n});
  columns.sizes.push_back({n / 2, 1});
  EXPECT_EQ(columns.first(), std::nullopt);
  columns.offsets.back()[1] = 7;
  got = columns.first();
  ASSERT_TRUE(got);
  EXPECT_TRUE(columns.overlap(got->first, got->second));

  // Two free dims: n unit boxes on a diagonal staircase of long boxes.
  Boxes stairs;
  for (int64_t k = 0; k < n; ++k) {
    stairs.offsets.push_back({k, k});
    stairs.sizes.push_back({1, n - k});
    stairs.offsets.push_back({k + 1, k});
    stairs.sizes.push_back({n - k, 1});
  }
  EXPECT_EQ(stairs.first(), std::nullopt);
  stairs.sizes[2 * 500 + 1][1] += 1; // into the next step's row
  got = stairs.first();
  ASSERT_TRUE(got);
  EXPECT_TRUE(stairs.overlap(got->first, got->second));
}

// A staircase tiling of [0, n + 1) x [0, n) x [0, 2) with no grid dim:
// row k from column k on (z whole), and column k below row k (z in two
// halves). A sweep along any dim crosses about n boxes at each.
Boxes stairs3(int64_t n) {
  Boxes b;
  for (int64_t k = 0; k < n; ++k) {
    b.offsets.push_back({k, k, 0});
    b.sizes.push_back({1, n - k, 2});
    for (int64_t z = 0; z < 2; ++z) {
      b.offsets.push_back({k + 1, k, z});
      b.sizes.push_back({n - k, 1, 1});
    }
  }
  return b;
}

TEST(BoxOverlap, ThreeFreeDimsTilingsAndBreaks) {
  // A tiling of its bounds is cleared by its corners (150,000 boxes, which
  // a sweep would compare about 10^10 times); a moved, grown or shrunk
  // box, or one grown and another shrunk (the same volume), breaks it and
  // the sweep answers as all pairs do.
  EXPECT_EQ(stairs3(50000).first(), std::nullopt);
  std::mt19937 rng(23);
  for (int round = 0; round < 24; ++round) {
    Boxes b = stairs3(1000);
    size_t i = rng() % b.offsets.size(), d = rng() % 3;
    switch (round % 4) {
    case 0:
      b.offsets[i][d] += 1;
      break;
    case 1:
      b.sizes[i][d] += 1;
      break;
    case 2:
      if (b.sizes[i][d] > 1)
        b.sizes[i][d] -= 1;
      break;
    case 3: {
      b.sizes[i][d] += 1;
      size_t j = rng() % b.offsets.size();
      for (size_t e = 0; e < 3; ++e)
        if (b.sizes[j][e] > 1) {
          b.sizes[j][e] -= 1;
          break;
        }
      break;
    }
    }
    b.check("round " + std::to_string(round));
  }
}

TEST(BoxOverlap, TilingFaults) {
  // Exact tilings pass; too few elements is a count (no search), too many
  // an overlap; counts stop past the shard's, without overflow.
  auto fault = [](const Boxes &b, int64_t shard) {
    return findTilingFault(
        b.offsets.size(),
        [&](size_t i) { return llvm::ArrayRef(b.offsets[i]); },
        [&](size_t i) { return llvm::ArrayRef(b.sizes[i]); }, shard);
  };
  Boxes b = stairs3(100); // [0, 101) x [0, 100) x [0, 2)
  EXPECT_EQ(fault(b, 101 * 100 * 2), std::nullopt);
  b.sizes[5][1] -= 1; // column 1 below row 1, z = 1: 99 elements
  std::optional<TilingFault> f = fault(b, 101 * 100 * 2);
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->overlap);
  EXPECT_EQ(f->covered, 101 * 100 * 2 - 99);
  b.sizes[5][1] += 2; // two columns wide: into row 2's boxes
  f = fault(b, 101 * 100 * 2);
  ASSERT_TRUE(f && f->overlap);
  EXPECT_TRUE(b.overlap(f->overlap->first, f->overlap->second));
  Boxes huge;
  const int64_t max = std::numeric_limits<int64_t>::max();
  for (int k = 0; k < 3; ++k) {
    huge.offsets.push_back({0});
    huge.sizes.push_back({max});
  }
  f = fault(huge, max);
  ASSERT_TRUE(f && f->more && f->overlap);
  EXPECT_EQ(*f->overlap, std::make_pair(size_t(0), size_t(1)));
}

} // namespace
