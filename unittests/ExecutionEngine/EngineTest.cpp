//===- EngineTest.cpp - Byte ranges of boxes and the step walker ----------===//
//
// A step cuts a box's packed bytes anywhere; the engine packs the range as
// at most 2n + 1 regular sub-boxes. Checked here against packing the whole
// box and slicing, on hand-made boxes and on random ones, and the step
// walker's staging against hand-computed offsets.
//
//===----------------------------------------------------------------------===//
#include "reshard/ExecutionEngine/Engine.h"
#include "reshard/Layout/BoxDescriptor.h"

#include "gtest/gtest.h"

#include <random>
#include <string>

using namespace reshard;
using namespace reshard::engine;

namespace {

std::vector<uint8_t> packAll(const std::vector<int64_t> &d,
                             const std::vector<uint8_t> &buf) {
  std::vector<uint8_t> out;
  int64_t run = d[1];
  for_each_run(d.data() + 3, d[2], 2, 1, 0, d[0], 0, [&](int64_t o, int64_t) {
    out.insert(out.end(), buf.begin() + o, buf.begin() + o + run);
  });
  return out;
}

TEST(Engine, BoxDescriptorOfColumns) {
  // Columns 2-3 of a [4, 6] f32 shard: 4 runs of 8 bytes, 24 bytes apart.
  llvm::SmallVector<int64_t> d = boxDescriptor({4, 6}, {}, {0, 2}, {4, 2}, 4);
  EXPECT_EQ(std::vector<int64_t>(d.begin(), d.end()),
            (std::vector<int64_t>{8, 8, 1, 4, 24}));
  EXPECT_EQ(box_bytes(d.data()), 32);
}

TEST(Engine, BoxDescriptorFollowsLogicalDimsInAPermutedBuffer) {
  // Columns 1-2 of a [2, 3] f32 shard stored dim_order [1, 0] (a [3, 2]
  // buffer): the loops still run over rows, then columns, so a pack here
  // and an unpack into a row-major shard agree on the order of the bytes.
  llvm::SmallVector<int64_t> d =
      boxDescriptor({2, 3}, {1, 0}, {0, 1}, {2, 2}, 4);
  EXPECT_EQ(std::vector<int64_t>(d.begin(), d.end()),
            (std::vector<int64_t>{8, 4, 2, 2, 4, 2, 8}));
  EXPECT_EQ(box_bytes(d.data()), 16);
  // The identity order gives the row-major descriptor.
  EXPECT_EQ(boxDescriptor({4, 6}, {0, 1}, {0, 2}, {4, 2}, 4),
            boxDescriptor({4, 6}, {}, {0, 2}, {4, 2}, 4));
  // A [2, 3, 4] shard stored [1, 0, 2]: rows of 4 stay runs.
  llvm::SmallVector<int64_t> r =
      boxDescriptor({2, 3, 4}, {1, 0, 2}, {0, 0, 0}, {2, 3, 4}, 1);
  EXPECT_EQ(std::vector<int64_t>(r.begin(), r.end()),
            (std::vector<int64_t>{0, 4, 2, 2, 4, 3, 8}));
}

TEST(Engine, RangeCutsRowsAndRuns) {
  // 3 runs of 4 bytes, 10 apart, from byte 1: bytes [5, 9) of the packed
  // box are the last 3 of run 1 and the first of run 2 (run 1 starts at
  // 11, run 2 at 21): a partial run, then a partial run.
  std::vector<int64_t> d = {1, 4, 1, 3, 10};
  std::vector<uint8_t> buf(32);
  for (size_t i = 0; i < buf.size(); ++i)
    buf[i] = static_cast<uint8_t>(i);
  uint8_t out[4];
  pack_range(d.data(), buf.data(), 5, 9, out);
  EXPECT_EQ(std::vector<uint8_t>(out, out + 4),
            (std::vector<uint8_t>{12, 13, 14, 21}));
  int pieces = 0;
  for_each_subbox(
      d.data(), 5, 9,
      [&](int64_t, int64_t, const int64_t *, int64_t) { ++pieces; });
  EXPECT_EQ(pieces, 2);
}

TEST(Engine, RandomRangesMatchWholeBox) {
  std::mt19937 g(1);
  for (int it = 0; it < 5000; ++it) {
    int n = g() % 4;
    int64_t run = 1 + g() % 5, span = run + g() % 3;
    std::vector<int64_t> counts(n), strides(n);
    for (int i = n - 1; i >= 0; --i) {
      counts[i] = 1 + g() % 4;
      strides[i] = span;
      span = span * counts[i] + g() % 3;
    }
    std::vector<int64_t> d = {static_cast<int64_t>(g() % 5), run, n};
    for (int i = 0; i < n; ++i) {
      d.push_back(counts[i]);
      d.push_back(strides[i]);
    }
    std::vector<uint8_t> buf(d[0] + span + 8);
    for (uint8_t &b : buf)
      b = static_cast<uint8_t>(g());
    std::vector<uint8_t> all = packAll(d, buf);
    int64_t total = box_bytes(d.data());
    ASSERT_EQ(static_cast<int64_t>(all.size()), total);
    int64_t lo = g() % (total + 1), hi = lo + g() % (total - lo + 1);
    std::vector<uint8_t> part(hi - lo);
    pack_range(d.data(), buf.data(), lo, hi, part.data());
    ASSERT_TRUE(std::equal(part.begin(), part.end(), all.begin() + lo));
    // Unpacking the range writes exactly those bytes back.
    std::vector<uint8_t> back(buf.size(), 0), again(hi - lo);
    unpack_range(d.data(), back.data(), lo, hi, part.data());
    pack_range(d.data(), back.data(), lo, hi, again.data());
    ASSERT_EQ(again, part);
  }
}

/// Rank 0 sends rank 1 a 40-byte stream at quota 16 (steps 0-2) and
/// receives from rank 2 a 5-byte stream in step 0 and a 20-byte one at
/// quota 16 in steps 1-2.
struct ThreeStreams {
  // {phase, start, quota, bytes, num_items, first_item}
  StreamBody bodies[3] = {
      {0, 0, 16, 40, 0, 0}, {0, 0, 16, 5, 0, 0}, {1, 1, 16, 20, 0, 0}};
  StreamRow streams[3] = {{0, 1, 0}, {2, 0, 1}, {2, 0, 2}};
  int64_t words[2] = {1, 2};
  RankProgram p = {0, 0, 0, 0, 0, 1, 0, 2, 3};
  Plan plan = {};
  std::vector<Message> sends, recvs, ahead;
  explicit ThreeStreams(bool receivesAhead) {
    plan.streams = streams;
    plan.num_streams = 3;
    plan.stream_bodies = bodies;
    plan.num_stream_bodies = 3;
    plan.words = words;
    plan.receives_ahead = receivesAhead;
  }
  int64_t step(int64_t s, int64_t area) {
    return step_messages(plan, p, s, area, sends, recvs, ahead);
  }
};

TEST(Engine, StepMessagesStageNextReceivesAhead) {
  // Every step stages at most 48 bytes. Step 0: its receive at 0, its
  // send at 16, step 1's receive (posted ahead) at the end of the 48-byte
  // area, 32. Step 1: its receive stays at 32, step 2's is at 0 and its
  // send at 16.
  ThreeStreams t(true);
  EXPECT_EQ(rank_workspace(t.plan, t.p), 48);
  EXPECT_EQ(t.step(0, 48), 48);
  ASSERT_EQ(t.sends.size(), 1u);
  ASSERT_EQ(t.recvs.size(), 1u);
  ASSERT_EQ(t.ahead.size(), 1u);
  EXPECT_EQ(t.recvs[0].staging, 0);
  EXPECT_EQ(t.recvs[0].bytes, 5);
  EXPECT_EQ(t.sends[0].staging, 16);
  EXPECT_EQ(t.sends[0].bytes, 16);
  EXPECT_EQ(t.ahead[0].staging, 32);
  EXPECT_EQ(t.ahead[0].bytes, 16);
  EXPECT_EQ(t.step(1, 48), 48);
  EXPECT_EQ(t.recvs[0].staging, 32);
  EXPECT_EQ(t.ahead[0].staging, 0);
  EXPECT_EQ(t.ahead[0].bytes, 4);
  EXPECT_EQ(t.sends[0].staging, 16);
  EXPECT_EQ(t.step(2, 48), 32);
  EXPECT_EQ(t.sends[0].bytes, 8);
  EXPECT_EQ(t.sends[0].staging, 16);
  EXPECT_EQ(t.recvs[0].staging, 0);
  EXPECT_TRUE(t.ahead.empty());
  EXPECT_EQ(rank_steps(t.plan, t.p), 3);
}

TEST(Engine, StepMessagesWithoutReceivesAhead) {
  // A step stages its own messages only (at most 32 bytes); odd steps'
  // receives sit at the end of the area, their sends at its start.
  ThreeStreams t(false);
  EXPECT_EQ(rank_workspace(t.plan, t.p), 32);
  EXPECT_EQ(t.step(0, 32), 32);
  EXPECT_TRUE(t.ahead.empty());
  EXPECT_EQ(t.recvs[0].staging, 0);
  EXPECT_EQ(t.sends[0].staging, 16);
  EXPECT_EQ(t.step(1, 32), 32);
  EXPECT_TRUE(t.ahead.empty());
  EXPECT_EQ(t.sends[0].staging, 0);
  EXPECT_EQ(t.recvs[0].staging, 16);
}

/// Random programs of rank 0: the sweep over all steps (direction_loads,
/// step_staging, rank_workspace) against walking the steps one by one
/// (step_messages), with and without receives posted ahead.
TEST(Engine, StepLoadsMatchTheStepWalk) {
  std::mt19937_64 g(7);
  for (int round = 0; round < 300; ++round) {
    std::vector<StreamBody> bodies;
    std::vector<StreamRow> rows;
    std::vector<int64_t> words;
    // Sends to peers 1..P ascending, then receives from them, a few
    // streams (phases) per peer, some empty, some in one slice.
    int peers = 1 + g() % 6;
    RankProgram p = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int send = 1; send >= 0; --send) {
      for (int peer = 1; peer <= peers; ++peer)
        for (int phase = 0, n = g() % 4; phase < n; ++phase) {
          int64_t quota = 1 + g() % 100;
          int64_t bytes = g() % 4 == 0 ? 0 : 1 + g() % 600;
          bodies.push_back(
              {phase, static_cast<int64_t>(g() % 12), quota, bytes, 0, 0});
          if (!send)
            words.push_back(rows.size());
          rows.push_back({send ? 0 : peer, send ? peer : 0,
                          static_cast<int32_t>(bodies.size() - 1)});
        }
      if (send)
        p.num_sends = rows.size();
    }
    p.num_recvs = words.size();
    Plan plan = {};
    plan.streams = rows.data();
    plan.num_streams = rows.size();
    plan.stream_bodies = bodies.data();
    plan.num_stream_bodies = bodies.size();
    plan.words = words.data();
    p.steps = rank_steps(plan, p);
    for (bool ahead : {false, true}) {
      plan.receives_ahead = ahead;
      StepLoads sendLoads, recvLoads;
      direction_loads(plan, p, true, p.steps, sendLoads);
      direction_loads(plan, p, false, p.steps, recvLoads);
      std::vector<Message> sends, recvs, next;
      int64_t most = 0;
      for (int64_t s = 0; s <= p.steps; ++s) {
        int64_t used = step_messages(plan, p, s, -1, sends, recvs, next);
        if (s < p.steps) {
          ASSERT_EQ(step_staging(plan, sendLoads, recvLoads, s), used);
          most = std::max(most, used);
        }
        for (auto [list, loads] :
             {std::pair{&sends, &sendLoads}, {&recvs, &recvLoads}}) {
          int64_t bytes = 0, aligned = 0;
          for (const Message &m : *list) {
            bytes += m.bytes;
            aligned += align_up(m.bytes);
          }
          ASSERT_EQ(loads->bytes[s], bytes) << "round " << round;
          ASSERT_EQ(loads->aligned[s], aligned) << "round " << round;
          ASSERT_EQ(loads->messages[s], static_cast<int64_t>(list->size()));
        }
      }
      ASSERT_EQ(rank_workspace(plan, p), most);
    }
  }
}

} // namespace

TEST(Engine, StreamAtJoinsRowAndBody) {
  ThreeStreams t(false);
  t.streams[1].body = 0; // rank 2's first stream now shares rank 0's body
  Stream s = stream_at(t.plan, 1);
  EXPECT_EQ(s.sender, 2);
  EXPECT_EQ(s.receiver, 0);
  EXPECT_EQ(s.bytes, 40);
  Stream r = recv_stream(t.plan, t.p, 1);
  EXPECT_EQ(r.sender, 2);
  EXPECT_EQ(r.phase, 1);
  EXPECT_EQ(r.start, 1);
  EXPECT_EQ(r.quota, 16);
  EXPECT_EQ(r.bytes, 20);
}

namespace {

TEST(Engine, TimeoutIsAPositiveNumberOrUnset) {
  /* The cases of python/tests/test_runtime.py
   * test_the_deadline_is_read_as_the_c_runtime_reads_it: 0 means refused
   * (or, for the blank ones, unset). */
  const struct {
    const char *text;
    double seconds;
  } cases[] = {{"30", 30},
               {"30s", 0},
               {" 2.5 ", 2.5},
               {"-1", 0},
               {"1e", 0},
               {"0x10", 16},
               {"0x1p4", 16},
               {"1_0", 0},
               {".5", .5},
               {"5.", 5},
               {"abc", 0},
               {"", 0},
               {" ", 0},
               {"inf", 0},
               {"nan", 0},
               {"+7", 7},
               {"0", 0},
               {"-0", 0},
               {"1e-3", 1e-3},
               {"0x.8", .5},
               {"12 34", 0},
               {"\t 3", 3},
               {"+.5", .5},
               {"1e+", 0},
               {"0x", 0},
               {"-0x1p-2", 0},
               {"INFINITY", 0},
               {"\xc2\xa0"
                "5",
                0},
               {"\xd9\xa3"
                "0",
                0},
               {"1e999", 0},
               {"0x1p1024", 0},
               {"1e-9", 1e-9},
               {"\n", 0},
               {"3\n", 3}};
  for (const auto &c : cases) {
    double s = -1;
    bool blank =
        std::string(c.text).find_first_not_of(" \t\n") == std::string::npos;
    EXPECT_EQ(parse_timeout(c.text, &s), c.seconds > 0 || blank) << c.text;
    EXPECT_EQ(s, c.seconds) << c.text;
  }
  double s = -1;
  EXPECT_TRUE(parse_timeout(nullptr, &s));
  EXPECT_EQ(s, 0);
}

/* check_overlaps against every pair, on random spans of one buffer: an
 * overlap is refused exactly when a destination or the workspace is in
 * it, never between two sources. */
TEST(Engine, OverlapsAreFoundExactlyWhereAWrittenBufferIsInThem) {
  std::mt19937_64 rng(5);
  std::vector<uint8_t> memory(256);
  const int tensors = 5;
  const char *names[tensors] = {"a", "b", "c", "d", "e"};
  Plan plan{};
  plan.name = "p";
  plan.num_tensors = tensors;
  plan.tensor_names = names;
  int refused = 0;
  for (int round = 0; round < 20000; ++round) {
    void *src[tensors], *dst[tensors];
    int64_t sb[tensors], db[tensors];
    struct Span {
      int64_t lo, hi;
      bool written;
    };
    std::vector<Span> spans;
    auto draw = [&](void **p, int64_t *bytes, bool written) {
      int64_t lo = rng() % 200, n = rng() % 4 ? rng() % 40 : 0;
      bool null = rng() % 8 == 0;
      *p = null ? nullptr : memory.data() + lo;
      *bytes = n;
      if (!null && n > 0)
        spans.push_back({lo, lo + n, written});
    };
    for (int t = 0; t < tensors; ++t) {
      draw(&src[t], &sb[t], false);
      draw(&dst[t], &db[t], true);
    }
    void *ws = nullptr;
    int64_t wsb = 0;
    draw(&ws, &wsb, true);
    bool want = false;
    for (size_t i = 0; i < spans.size(); ++i)
      for (size_t j = i + 1; j < spans.size(); ++j)
        if ((spans[i].written || spans[j].written) &&
            spans[i].lo < spans[j].hi && spans[j].lo < spans[i].hi)
          want = true;
    char err[512] = "";
    int rc =
        check_overlaps(plan, 0, src, dst, ws, wsb, sb, db, err, sizeof(err));
    ASSERT_EQ(rc, want ? RESHARD_ERR_ARGS : RESHARD_OK) << round;
    if (want) {
      EXPECT_NE(std::strstr(err, "share memory"), nullptr) << err;
    }
    refused += want;
  }
  EXPECT_GT(refused, 1000);
  EXPECT_LT(refused, 19000);
}

} // namespace
