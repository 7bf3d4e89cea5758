//===- BoxOverlapTest.cpp - firstOverlap against all pairs ----------------===//
//
// firstOverlap answers the least overlapping pair without comparing all
// pairs past 64 boxes (a grid's cells sorted, else a sweep along dim 0):
// checked against the pairwise answer on random grids, random boxes and
// tilings with one box moved.
//
//===----------------------------------------------------------------------===//
#include "reshard/Layout/BoxOverlap.h"

#include "gtest/gtest.h"

#include <random>
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
  std::optional<std::pair<size_t, size_t>> allPairs() const {
    for (size_t a = 0; a < offsets.size(); ++a)
      for (size_t b = a + 1; b < offsets.size(); ++b) {
        bool overlap = true;
        for (size_t d = 0; d < offsets[a].size(); ++d)
          overlap = overlap && offsets[a][d] < offsets[b][d] + sizes[b][d] &&
                    offsets[b][d] < offsets[a][d] + sizes[a][d];
        if (overlap)
          return std::make_pair(a, b);
      }
    return std::nullopt;
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
    EXPECT_EQ(b.first(), b.allPairs()) << "round " << round;
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
    EXPECT_EQ(b.first(), b.allPairs()) << "round " << round;
  }
}

TEST(BoxOverlap, EmptyBoxes) {
  // An empty box overlaps a box that holds its offset strictly inside (the
  // predicate's answer), and two equal empty boxes do not overlap: a grid
  // of cells would say both wrong.
  std::mt19937 rng(3);
  for (int round = 0; round < 40; ++round) {
    Boxes b = grid(rng, 1 + rng() % 10, 7 + rng() % 10, 0);
    b.offsets.push_back({1000, 1000});
    b.sizes.push_back({0, 5});
    b.offsets.push_back({1000, 1000});
    b.sizes.push_back({0, 5});
    if (round % 2) {
      b.offsets.push_back({4, 6}); // inside the cell at (3, 5)
      b.sizes.push_back({0, 0});
    }
    EXPECT_EQ(b.first(), b.allPairs()) << "round " << round;
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

} // namespace
