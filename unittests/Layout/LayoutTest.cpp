//===- LayoutTest.cpp - Layout checks report the right item --------------===//
#include "reshard/Layout/Layout.h"

#include "gtest/gtest.h"

using namespace reshard;

namespace {

/// Collects "path: message" lines of the LayoutErrors a check returns.
struct Diags {
  std::vector<std::string> lines;
  /// Records every problem in `err`; true when there was none.
  bool ok(llvm::Error err) {
    size_t before = lines.size();
    forEachLayoutError(std::move(err), [&](const LayoutError &e) {
      lines.push_back(e.getPath() + ": " + e.getMessage());
    });
    return lines.size() == before;
  }
  template <typename T> bool ok(llvm::Expected<T> value) {
    return ok(value.takeError());
  }
  bool mentions(const std::string &needle) const {
    for (const std::string &l : lines)
      if (l.find(needle) != std::string::npos)
        return true;
    return false;
  }
};

ShardingSpec spec(std::vector<std::vector<std::string>> axes,
                  std::vector<std::vector<int64_t>> blocks = {}) {
  ShardingSpec s;
  for (size_t d = 0; d < axes.size(); ++d) {
    DimShardingSpec dim;
    dim.axes.assign(axes[d].begin(), axes[d].end());
    if (d < blocks.size())
      dim.blocks.assign(blocks[d].begin(), blocks[d].end());
    s.dims.push_back(dim);
  }
  return s;
}

TEST(VerifyMesh, AcceptsWellFormed) {
  Diags d;
  EXPECT_TRUE(d.ok(verifyMesh({{2, 2}, {"dp", "tp"}, {0, 1, 2, 3}}, "m")));
  EXPECT_TRUE(d.lines.empty());
}

TEST(VerifyMesh, NamesEachProblem) {
  Diags d;
  EXPECT_FALSE(d.ok(verifyMesh({{2, 2}, {"tp", "tp"}, {0, 1, 2, 3}}, "m")));
  EXPECT_TRUE(d.mentions("m.axes[1]: axis name 'tp' is used twice"));

  Diags d2;
  EXPECT_FALSE(d2.ok(verifyMesh({{2, 0}, {"a", "b"}, {}}, "m")));
  EXPECT_TRUE(d2.mentions("m.shape[1]: mesh axis size 0 must be positive"));

  Diags d3;
  EXPECT_FALSE(d3.ok(verifyMesh({{2, 2}, {"a", "b"}, {0, 1, 2}}, "")));
  EXPECT_TRUE(
      d3.mentions("ranks: the mesh shape has 4 device(s) but 3 rank(s)"));

  Diags d4;
  EXPECT_FALSE(d4.ok(verifyMesh({{3}, {"a"}, {0, -1, 0}}, "")));
  EXPECT_TRUE(d4.mentions("ranks[1]: rank -1 is out of range"));
  EXPECT_TRUE(d4.mentions("ranks[2]: rank 0 appears twice (also ranks[0])"));

  Diags d5;
  EXPECT_FALSE(d5.ok(verifyMesh({{2}, {"a", "b"}, {0, 1}}, "")));
  EXPECT_TRUE(d5.mentions("2 axis names"));
}

TEST(VerifyMesh, HugeShapeIsAnErrorNotAnOverflow) {
  Diags d;
  EXPECT_FALSE(d.ok(
      verifyMesh({{int64_t(1) << 40, int64_t(1) << 40}, {"a", "b"}, {}}, "")));
  EXPECT_TRUE(d.mentions("more than"));
}

TEST(VerifyTopology, DomainMustHoldWholeNodes) {
  Diags d;
  TopologySpec t;
  t.gpusPerNode = 8;
  t.nvlDomainSize = 12;
  t.nicGBps = 0;
  EXPECT_FALSE(d.ok(verifyTopology(t, "topology")));
  EXPECT_TRUE(d.mentions("topology.nvl_domain_size: NVLink domain size 12 is "
                         "not a multiple of gpus_per_node 8"));
  EXPECT_TRUE(d.mentions("topology.nic_GBps_per_gpu: bandwidth must be "
                         "positive"));
  TopologySpec gb200;
  gb200.gpusPerNode = 4;
  gb200.nvlDomainSize = 72;
  EXPECT_TRUE(d.ok(verifyTopology(gb200, "")));
}

TEST(VerifyTensorShape, RejectsNegativeDimsAndByteOverflow) {
  Diags d;
  EXPECT_FALSE(d.ok(verifyTensorShape({4, -1}, 2, "t")));
  EXPECT_TRUE(d.mentions("t.shape[1]: dim size -1 must be non-negative"));
  Diags d2;
  EXPECT_FALSE(
      d2.ok(verifyTensorShape({int64_t(1) << 31, int64_t(1) << 31}, 2, "")));
  EXPECT_TRUE(d2.mentions("overflows 64 bits"));
  EXPECT_TRUE(
      d2.ok(verifyTensorShape({int64_t(1) << 30, int64_t(1) << 30}, 4, "")));
  EXPECT_TRUE(d2.ok(verifyTensorShape({}, 8, "")));
}

TEST(ResolveSharding, ResolvesAxesToIndices) {
  std::vector<std::string> axes = {"dp", "tp", "ep"};
  llvm::Expected<Sharding> s =
      resolveSharding(spec({{"ep", "dp"}, {}}), axes, {8, 4}, "src");
  ASSERT_TRUE(static_cast<bool>(s));
  EXPECT_EQ(s->dims[0].axes, (llvm::SmallVector<unsigned>{2, 0}));
  EXPECT_TRUE(s->dims[1].axes.empty());
}

TEST(ResolveSharding, NamesEachProblem) {
  std::vector<std::string> axes = {"dp", "tp"};
  Diags d;
  EXPECT_FALSE(d.ok(resolveSharding(spec({{"tp"}}), axes, {8, 4}, "src")));
  EXPECT_TRUE(d.mentions("src.dims: the sharding has 1 dims but the tensor "
                         "has rank 2"));
  Diags d2;
  EXPECT_FALSE(d2.ok(resolveSharding(spec({{"xx"}, {}}), axes, {8, 4}, "src")));
  EXPECT_TRUE(d2.mentions("src.dims[0][0]: axis 'xx' is not an axis of the "
                          "mesh (its axes: dp, tp)"));
  Diags d3;
  EXPECT_FALSE(d3.ok(
      resolveSharding(spec({{"tp"}, {"dp", "tp"}}), axes, {8, 4}, "src")));
  EXPECT_TRUE(d3.mentions("src.dims[1][1]: mesh axis 'tp' is used twice "
                          "(also by dim 0)"));
  Diags d4;
  EXPECT_FALSE(d4.ok(
      resolveSharding(spec({{"tp"}, {}}, {{4, -1, 5}}), axes, {8, 4}, "src")));
  EXPECT_TRUE(d4.mentions("src.blocks.0[1]: block size -1 must be "
                          "non-negative"));
  Diags d5;
  EXPECT_FALSE(d5.ok(
      resolveSharding(spec({{"tp"}, {}}, {{4, 3}}), axes, {8, 4}, "src")));
  EXPECT_TRUE(d5.mentions("src.blocks.0: blocks sum to 7 but dim 0 has size "
                          "8"));
  Diags d6;
  EXPECT_FALSE(d6.ok(resolveSharding(spec({{"tp"}}, {{INT64_MAX, INT64_MAX}}),
                                     axes, {8}, "")));
  EXPECT_TRUE(d6.mentions("at least 2^63"));
}

TEST(ResolveSharding, ChecksAndCanonicalizesOrders) {
  std::vector<std::string> axes = {"tp"};
  auto withOrder = [](llvm::SmallVector<OrderRun> order) {
    ShardingSpec s = spec({{"tp"}});
    s.dims[0].order = std::move(order);
    return s;
  };
  Diags d;
  llvm::Expected<Sharding> r = resolveSharding(
      withOrder({{4, 4}, {9, 0}, {0, 2}, {2, 2}}), axes, {8}, "src");
  ASSERT_TRUE(d.ok(r.takeError()));
  // The empty run is dropped and [0, 2) [2, 2) merge.
  EXPECT_EQ(r->dims[0].order, (llvm::SmallVector<OrderRun>{{4, 4}, {0, 4}}));
  llvm::Expected<Sharding> identity =
      resolveSharding(withOrder({{0, 3}, {3, 5}}), axes, {8}, "src");
  ASSERT_TRUE(d.ok(identity.takeError()));
  EXPECT_TRUE(identity->dims[0].order.empty());

  Diags d1;
  EXPECT_FALSE(
      d1.ok(resolveSharding(withOrder({{0, 4}, {3, 5}}), axes, {8}, "src")));
  EXPECT_TRUE(d1.mentions("src.order.0[1]: run [3, 5] overlaps run 0 [0, 4] "
                          "of dim 0"));
  Diags d2;
  EXPECT_FALSE(
      d2.ok(resolveSharding(withOrder({{0, 4}, {5, 3}}), axes, {8}, "src")));
  EXPECT_TRUE(d2.mentions("src.order.0: no run covers indices [4, 5) of dim "
                          "0"));
  Diags d3;
  EXPECT_FALSE(
      d3.ok(resolveSharding(withOrder({{0, 4}, {4, 5}}), axes, {8}, "src")));
  EXPECT_TRUE(d3.mentions("src.order.0[1]: run [4, 5] is outside dim 0 of "
                          "size 8"));
  Diags d4;
  EXPECT_FALSE(d4.ok(
      resolveSharding(withOrder({{4, INT64_MAX}, {0, 4}}), axes, {8}, "src")));
  EXPECT_TRUE(d4.mentions("src.order.0[0]: run [4, 9223372036854775807] is "
                          "outside dim 0"));
  Diags d5;
  EXPECT_FALSE(
      d5.ok(resolveSharding(withOrder({{0, 4}, {4, 3}}), axes, {8}, "src")));
  EXPECT_TRUE(d5.mentions("no run covers indices [7, 8) of dim 0; the runs "
                          "must cover [0, 8) exactly"));
}

TEST(Dtypes, KnowsEveryInterchangeName) {
  EXPECT_EQ(dtypeBytes("bf16"), 2);
  EXPECT_EQ(dtypeBytes("fp8e4m3"), 1);
  EXPECT_EQ(dtypeBytes("uint64"), 8);
  EXPECT_FALSE(dtypeBytes("float32").has_value());
  EXPECT_GE(dtypeNames().size(), 12u);
}

} // namespace
