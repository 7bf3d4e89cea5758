//===- PartsTest.cpp - Messages cut into parts ----------------------------===//
//
// The MPI backend sends large segments in place: a byte range of a box is
// in place only where it is one run of its shard, and both ends of a
// message cut it at the same places whatever each keeps in place.
//
//===----------------------------------------------------------------------===//
#include "reshard/ExecutionEngine/Parts.h"
#include "reshard/ExecutionEngine/CallChecks.h"
#include "reshard/Layout/BoxDescriptor.h"

#include "gtest/gtest.h"

#include <random>

using namespace reshard;
using namespace reshard::engine;

namespace {

TEST(Parts, ARangeIsInPlaceOnlyWithinOneRun) {
  // Columns 2-3 of a [4, 6] f32 shard: 4 runs of 8 bytes, 24 apart.
  const int64_t columns[] = {8, 8, 1, 4, 24};
  EXPECT_EQ(contiguous_offset(columns, 0, 8), 8);
  EXPECT_EQ(contiguous_offset(columns, 9, 15), 8 + 24 + 1);
  EXPECT_EQ(contiguous_offset(columns, 4, 12), -1);
  EXPECT_EQ(contiguous_offset(columns, 0, 32), -1);
  // Whole rows of the same shard are one run.
  const int64_t rows[] = {24, 96, 0};
  EXPECT_EQ(contiguous_offset(rows, 5, 90), 29);
  // The same bytes as a loop of rows whose stride is the row are packed,
  // not sent in place (boxDescriptor merges such loops, so plans do not
  // carry them): refused, never wrong.
  const int64_t loopedRows[] = {24, 24, 1, 2, 24};
  EXPECT_EQ(contiguous_offset(loopedRows, 3, 40), -1);
  EXPECT_EQ(contiguous_offset(loopedRows, 30, 40), 24 + 30);
}

TEST(Parts, PlanDescriptorsOfWholeRowsAreOneRun) {
  // Rows 1-2 of a [4, 6] f32 shard, as the planner describes them.
  llvm::SmallVector<int64_t> d = boxDescriptor({4, 6}, {}, {1, 0}, {2, 6}, 4);
  EXPECT_EQ(contiguous_offset(d.data(), 0, 48), 24);
  // A [2, 3, 4] box of a [5, 3, 4] shard: whole planes, one run.
  llvm::SmallVector<int64_t> p =
      boxDescriptor({5, 3, 4}, {}, {2, 0, 0}, {2, 3, 4}, 2);
  EXPECT_EQ(contiguous_offset(p.data(), 10, 90), 2 * 24 + 10);
}

TEST(Parts, RandomRangesAreInPlaceExactlyWhenTheirBytesAreOneRun) {
  std::mt19937 g(7);
  for (int it = 0; it < 5000; ++it) {
    int n = g() % 4;
    int64_t run = 1 + g() % 5, span = run + g() % 2;
    std::vector<int64_t> d = {static_cast<int64_t>(g() % 5), run, n};
    std::vector<int64_t> counts(n), strides(n);
    for (int i = n - 1; i >= 0; --i) {
      counts[i] = 1 + g() % 4;
      strides[i] = span;
      span = span * counts[i] + g() % 2;
    }
    for (int i = 0; i < n; ++i) {
      d.push_back(counts[i]);
      d.push_back(strides[i]);
    }
    int64_t total = box_bytes(d.data());
    int64_t lo = g() % total, hi = lo + 1 + g() % (total - lo);
    // Where each packed byte sits in the shard.
    std::vector<int64_t> where;
    for_each_packed_run(d.data(), lo, hi,
                        [&](int64_t o, int64_t, int64_t length) {
                          for (int64_t k = 0; k < length; ++k)
                            where.push_back(o + k);
                        });
    bool oneRun = true;
    for (size_t k = 1; k < where.size(); ++k)
      oneRun = oneRun && where[k] == where[k - 1] + 1;
    int64_t at = contiguous_offset(d.data(), lo, hi);
    // Adjacent runs may touch without the descriptor saying so; in
    // place is then refused (packed), never wrong.
    if (at >= 0) {
      ASSERT_TRUE(oneRun);
      ASSERT_EQ(at, where.front());
    }
    if (n == 0) {
      ASSERT_EQ(at, where.front());
    }
  }
}

TEST(Parts, StagedBytesJoinAndOwnPartsStandAlone) {
  uint8_t staging[256], tensor[64];
  std::vector<Part> parts;
  PartCutter cut(staging + 16, 1 << 20, parts);
  cut.staged(3);
  cut.staged(5);
  cut.own(tensor + 4, 40); // in place
  cut.own(nullptr, 20);    // its own part, packed where it would sit
  cut.staged(2);
  cut.flush();
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].at, staging + 16);
  EXPECT_EQ(parts[0].bytes, 8);
  EXPECT_EQ(parts[1].at, tensor + 4);
  EXPECT_EQ(parts[1].bytes, 40);
  EXPECT_EQ(parts[2].at, staging + 16 + 48);
  EXPECT_EQ(parts[2].bytes, 20);
  EXPECT_EQ(parts[3].at, staging + 16 + 68);
  EXPECT_EQ(parts[3].bytes, 2);
}

TEST(Parts, NoPartIsLongerThanTheMost) {
  uint8_t staging[64], tensor[64];
  std::vector<Part> parts;
  PartCutter cut(staging, 16, parts);
  cut.staged(20);
  cut.own(tensor, 33);
  cut.flush();
  const int64_t sizes[] = {16, 4, 16, 16, 1};
  ASSERT_EQ(parts.size(), 5u);
  for (int k = 0; k < 5; ++k)
    EXPECT_EQ(parts[k].bytes, sizes[k]);
  EXPECT_EQ(parts[1].at, staging + 16);
  EXPECT_EQ(parts[4].at, tensor + 32);
}

TEST(Parts, DirectMinIsAWholeNumberOfBytesOrUnset) {
  const struct {
    const char *text;
    bool ok;
    int64_t bytes;
  } cases[] = {{nullptr, true, kDirectMin},
               {"", true, kDirectMin},
               {"  ", true, kDirectMin},
               {"0", true, 0},
               {" 4096\t", true, 4096},
               {"1099511627776", true, int64_t(1) << 40},
               {"1099511627777", false, 0},
               {"99999999999999999999999", false, 0},
               {"64k", false, 0},
               {"-1", false, 0},
               {"+1", false, 0},
               {"1 2", false, 0},
               {"0x10", false, 0},
               {"1.5", false, 0}};
  for (const auto &c : cases) {
    int64_t bytes = -1;
    EXPECT_EQ(parse_direct_min(c.text, &bytes), c.ok)
        << (c.text ? c.text : "(unset)");
    if (c.ok) {
      EXPECT_EQ(bytes, c.bytes) << (c.text ? c.text : "(unset)");
    }
  }
}

} // namespace
