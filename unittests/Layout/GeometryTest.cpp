//===- GeometryTest.cpp - Hand-computed shards per docs/Layout.md ---------===//
//
// Each expectation below was worked out by hand from nested torch.chunk:
// chunks of ceil(n / parts), the last ones short or empty.
//
//===----------------------------------------------------------------------===//
#include "reshard/Layout/Geometry.h"

#include "gtest/gtest.h"

using namespace reshard;
using V = llvm::SmallVector<int64_t>;

namespace {

Sharding sharding(std::vector<std::vector<unsigned>> axes,
                  std::vector<std::vector<int64_t>> blocks = {}) {
  Sharding s;
  for (size_t d = 0; d < axes.size(); ++d) {
    DimSharding dim;
    dim.axes.assign(axes[d].begin(), axes[d].end());
    if (d < blocks.size())
      dim.blocks.assign(blocks[d].begin(), blocks[d].end());
    s.dims.push_back(dim);
  }
  return s;
}

TEST(ChunkInterval, UnevenTenOverFour) {
  // ceil(10/4) = 3: [0,3) [3,6) [6,9) [9,10)
  EXPECT_EQ(chunkInterval(10, {4}, {0}), (Interval{0, 3}));
  EXPECT_EQ(chunkInterval(10, {4}, {1}), (Interval{3, 6}));
  EXPECT_EQ(chunkInterval(10, {4}, {2}), (Interval{6, 9}));
  EXPECT_EQ(chunkInterval(10, {4}, {3}), (Interval{9, 10}));
}

TEST(ChunkInterval, ThreeRowsOverFourLeavesOneEmpty) {
  EXPECT_EQ(chunkInterval(3, {4}, {2}), (Interval{2, 3}));
  EXPECT_TRUE(chunkInterval(3, {4}, {3}).empty());
}

TEST(ChunkInterval, TorchChunkCanLeaveSeveralTrailingEmpty) {
  // torch.chunk(arange(5), 4) -> sizes 2, 2, 1 and then nothing.
  // ceil(5/4) = 2: [0,2) [2,4) [4,5) [5,5)
  EXPECT_EQ(chunkInterval(5, {4}, {2}), (Interval{4, 5}));
  EXPECT_TRUE(chunkInterval(5, {4}, {3}).empty());
  // ceil(6/4) = 2: [0,2) [2,4) [4,6) and the fourth is empty.
  EXPECT_EQ(chunkInterval(6, {4}, {2}), (Interval{4, 6}));
  EXPECT_TRUE(chunkInterval(6, {4}, {3}).empty());
}

TEST(ChunkInterval, TwoAxesOnOneDimNest) {
  // 10 over (2, 3): first [0,5) [5,10), then each over 3 with ceil(5/3) = 2:
  // [0,2) [2,4) [4,5).
  EXPECT_EQ(chunkInterval(10, {2, 3}, {0, 0}), (Interval{0, 2}));
  EXPECT_EQ(chunkInterval(10, {2, 3}, {0, 2}), (Interval{4, 5}));
  EXPECT_EQ(chunkInterval(10, {2, 3}, {1, 1}), (Interval{7, 9}));
  EXPECT_EQ(chunkInterval(10, {2, 3}, {1, 2}), (Interval{9, 10}));
  // Nesting is not the same as one split over 6 (ceil(10/6) = 2 gives
  // [8,10) for the last device): the major chunk boundary at 5 matters.
  EXPECT_NE(chunkInterval(10, {2, 3}, {1, 2}), chunkInterval(10, {6}, {5}));
}

TEST(ChunkInterval, NestedEmptyInsideShortChunk) {
  // 5 over (4, 2): major [0,2) [2,4) [4,5) [5,5); the chunk [4,5) over 2
  // gives [4,5) and an empty one.
  EXPECT_EQ(chunkInterval(5, {4, 2}, {2, 0}), (Interval{4, 5}));
  EXPECT_TRUE(chunkInterval(5, {4, 2}, {2, 1}).empty());
  EXPECT_TRUE(chunkInterval(5, {4, 2}, {3, 0}).empty());
}

TEST(ChunkInterval, NoAxesIsWholeDim) {
  EXPECT_EQ(chunkInterval(7, {}, {}), (Interval{0, 7}));
}

TEST(ChunkInterval, HugeDimDoesNotOverflow) {
  int64_t n = int64_t(1) << 62;
  EXPECT_EQ(chunkInterval(n, {3}, {2}).end, n);
  EXPECT_EQ(chunkInterval(n + 1, {4}, {3}).end, n + 1);
}

TEST(ShardGeometry, BlocksQkvOverTP2) {
  // [8, 2, 2] (q, k, v) over tp = 2: each block halves.
  ShardGeometry g({12, 3}, {2}, sharding({{0}, {}}, {{8, 2, 2}}));
  EXPECT_EQ(g.segments(0, {0}),
            (llvm::SmallVector<DimSegment>{{0, 4, 0}, {8, 1, 4}, {10, 1, 5}}));
  EXPECT_EQ(g.segments(0, {1}),
            (llvm::SmallVector<DimSegment>{{4, 4, 0}, {9, 1, 4}, {11, 1, 5}}));
  EXPECT_EQ(g.localShape({1}), (V{6, 3}));
  std::vector<HeldBox> boxes = g.heldBoxes({1});
  ASSERT_EQ(boxes.size(), 3u);
  EXPECT_EQ(boxes[1].globalOffset, (V{9, 0}));
  EXPECT_EQ(boxes[1].sizes, (V{1, 3}));
  EXPECT_EQ(boxes[1].localOffset, (V{4, 0}));
}

TEST(ShardGeometry, BlocksQkvOverTP4LeavesKvEmptyOnHighRanks) {
  // q = 8 over 4 -> 2 each; k = v = 2 over 4 -> ceil = 1: [0,1) [1,2) [] [].
  ShardGeometry g({12}, {4}, sharding({{0}}, {{8, 2, 2}}));
  EXPECT_EQ(g.segments(0, {1}),
            (llvm::SmallVector<DimSegment>{{2, 2, 0}, {9, 1, 2}, {11, 1, 3}}));
  EXPECT_EQ(g.segments(0, {3}), (llvm::SmallVector<DimSegment>{{6, 2, 0}}));
  EXPECT_EQ(g.localShape({2}), (V{2}));
}

TEST(ShardGeometry, OrderInterleavesQkvPerGroup) {
  // Megatron's linear_qkv with nq = 4, nkv = 2, hd = 1: logical [q; k; v] =
  // rows 0-3, 4-5, 6-7, stored per group as q0 q1 k0 v0 | q2 q3 k1 v1.
  Sharding s = sharding({{0}});
  s.dims[0].order = {{0, 2}, {4, 1}, {6, 1}, {2, 2}, {5, 1}, {7, 1}};
  ShardGeometry g({8}, {2}, s);
  EXPECT_EQ(g.segments(0, {0}),
            (llvm::SmallVector<DimSegment>{{0, 2, 0}, {4, 1, 2}, {6, 1, 3}}));
  EXPECT_EQ(g.segments(0, {1}),
            (llvm::SmallVector<DimSegment>{{2, 2, 0}, {5, 1, 2}, {7, 1, 3}}));
  EXPECT_EQ(g.localShape({1}), (V{4}));
}

TEST(ShardGeometry, OrderAppliesBeforeBlocks) {
  // [up; gate] of a logical [gate; up] (f = 3) with blocks [3, 3] over tp =
  // 3: stored rows are 3 4 5 0 1 2; each block is chunked on its own.
  Sharding s = sharding({{0}}, {{3, 3}});
  s.dims[0].order = {{3, 3}, {0, 3}};
  ShardGeometry g({6}, {3}, s);
  EXPECT_EQ(g.segments(0, {1}),
            (llvm::SmallVector<DimSegment>{{4, 1, 0}, {1, 1, 1}}));
}

TEST(ShardGeometry, OrderMergesRunsContiguousInBoth) {
  // A stored chunk that crosses runs which continue each other is one run.
  EXPECT_EQ(toLogical({{1, 4, 0}}, {{0, 3}, {3, 3}}),
            (llvm::SmallVector<DimSegment>{{1, 4, 0}}));
  // ...and one that crosses a jump splits, keeping its local offsets.
  EXPECT_EQ(toLogical({{1, 4, 2}}, {{3, 3}, {0, 3}}),
            (llvm::SmallVector<DimSegment>{{4, 2, 2}, {0, 2, 4}}));
}

TEST(ShardGeometry, ReplicationOverUnusedAxis) {
  // Mesh (dp = 2, tp = 2); rows over tp, dp replicates.
  ShardGeometry g({4, 6}, {2, 2}, sharding({{1}, {}}));
  EXPECT_EQ(g.heldBoxes({0, 1})[0].globalOffset, (V{2, 0}));
  EXPECT_EQ(g.heldBoxes({1, 1})[0].globalOffset, (V{2, 0}));
  EXPECT_EQ(g.localShape({1, 0}), (V{2, 6}));
}

TEST(ShardGeometry, TwoShardedDims) {
  // [5, 7] with rows over a (2) and columns over b (3) on mesh (a, b).
  ShardGeometry g({5, 7}, {2, 3}, sharding({{0}, {1}}));
  // rows: ceil(5/2) = 3 -> [3,5); cols: ceil(7/3) = 3 -> [6,7).
  std::vector<HeldBox> boxes = g.heldBoxes({1, 2});
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].globalOffset, (V{3, 6}));
  EXPECT_EQ(boxes[0].sizes, (V{2, 1}));
  EXPECT_EQ(boxes[0].localOffset, (V{0, 0}));
}

TEST(ShardGeometry, AxesOrderOnOneDimIsMajorToMinor) {
  // Mesh (x = 2, y = 2), dim 0 of 8 over [y, x]: y picks the half, x the
  // quarter inside it.
  ShardGeometry g({8}, {2, 2}, sharding({{1, 0}}));
  EXPECT_EQ(g.heldBoxes({1, 0})[0].globalOffset, (V{2}));
  EXPECT_EQ(g.heldBoxes({0, 1})[0].globalOffset, (V{4}));
}

TEST(ShardGeometry, BlocksOnBothDimsMultiplyBoxes) {
  ShardGeometry g({4, 6}, {2}, sharding({{}, {0}}, {{2, 2}, {2, 4}}));
  // dim 0: two blocks, not sharded -> runs [0,2) [2,4) at 0 and 2.
  // dim 1: blocks 2 and 4 over 2 -> device 1 gets [1,2) and [4,6).
  std::vector<HeldBox> boxes = g.heldBoxes({1});
  ASSERT_EQ(boxes.size(), 4u);
  EXPECT_EQ(boxes[3].globalOffset, (V{2, 4}));
  EXPECT_EQ(boxes[3].sizes, (V{2, 2}));
  EXPECT_EQ(boxes[3].localOffset, (V{2, 1}));
  EXPECT_EQ(g.localShape({1}), (V{4, 3}));
}

TEST(ShardGeometry, ZeroDimTensorIsOneBox) {
  ShardGeometry g({}, {4}, sharding({}));
  std::vector<HeldBox> boxes = g.heldBoxes({3});
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_TRUE(boxes[0].sizes.empty());
  EXPECT_EQ(g.localNumElements({3}), 1);
}

TEST(ShardGeometry, EmptyShardHoldsNoBox) {
  ShardGeometry g({3, 2}, {4}, sharding({{0}, {}}));
  EXPECT_TRUE(g.heldBoxes({3}).empty());
  EXPECT_EQ(g.localShape({3}), (V{0, 2}));
  EXPECT_EQ(g.localNumElements({3}), 0);
}

TEST(ShardGeometry, ZeroSizeTensor) {
  ShardGeometry g({0, 4}, {2}, sharding({{0}, {}}));
  EXPECT_TRUE(g.heldBoxes({0}).empty());
  EXPECT_EQ(g.localShape({0}), (V{0, 4}));
}

TEST(ShardGeometry, OneDeviceMeshHoldsEverything) {
  ShardGeometry g({5, 3}, {1}, sharding({{0}, {}}));
  std::vector<HeldBox> boxes = g.heldBoxes({0});
  ASSERT_EQ(boxes.size(), 1u);
  EXPECT_EQ(boxes[0].sizes, (V{5, 3}));
}

TEST(MeshSpec, CoordinatesAreRowMajor) {
  MeshSpec mesh{{2, 3, 4}, {"a", "b", "c"}, {}};
  EXPECT_EQ(mesh.coords(0), (V{0, 0, 0}));
  EXPECT_EQ(mesh.coords(17), (V{1, 1, 1}));
  EXPECT_EQ(mesh.linear({1, 2, 3}), 23);
  EXPECT_EQ(mesh.numDevices(), 24);
}

} // namespace
