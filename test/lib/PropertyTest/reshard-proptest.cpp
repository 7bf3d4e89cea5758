//===- reshard-proptest.cpp - Random layouts, planned and checked ---------===//
//
// Each case draws a random pair of layouts (meshes up to 4-D, tensors 0-D to
// 5-D, uneven and empty chunks, blocks, several axes on one dim, replication,
// disjoint / identical / overlapping rank sets), often for several tensors of
// one class on one or two pairs of meshes (groups of several members),
// writes it as reshard IR, parses and verifies it, plans it with a random
// prefix of the pipeline and round-trips the result through text. Then
// both paths are checked element by element against the reference layout:
// the enumerating reference (reshard-expand's explicit pieces, run by the
// piece interpreter, with each piece's holders, local copies and
// exactly-once checked too) and the compact plan (lowered, round-tripped,
// verified, and run by the execution engine's loops).
//
//   reshard-proptest --cases 10000 --seed 1     the suite's run
//   reshard-proptest --seed N --cases 1 --dump  replay one case, print its IR
//
//===----------------------------------------------------------------------===//
#include "reshard/Conversion/Passes.h"
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"
#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"
#include "reshard/InitAll.h"
#include "reshard/Plan/CostModel.h"
#include "reshard/Reference/CheckPattern.h"
#include "reshard/Reference/LayoutOracle.h"
#include "reshard/Reference/PieceInterpreter.h"
#include "reshard/Reference/RuntimeInterpreter.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <random>
#include <set>

using namespace mlir;
using namespace reshard;
namespace cl = llvm::cl;

static cl::OptionCategory proptestCategory("reshard-proptest options");
static cl::opt<uint64_t> firstSeed("seed", cl::desc("First seed"), cl::init(1),
                                   cl::cat(proptestCategory));
static cl::opt<uint64_t> numCases("cases", cl::desc("Number of cases"),
                                  cl::init(1000), cl::cat(proptestCategory));
static cl::opt<bool> dump("dump", cl::desc("Print each case's IR"),
                          cl::cat(proptestCategory));
static cl::opt<int64_t> maxRanks(
    "max-ranks",
    cl::desc("Use at most N distinct global ranks, numbered 0..N-1 (for "
             "cases run under mpirun; default: no limit)"),
    cl::init(0), cl::cat(proptestCategory));
static cl::opt<std::string>
    inject("inject",
           cl::desc("Corrupt each plan before checking it, to show the checks "
                    "catch it: drop-piece, shift-source, remote-copy (the "
                    "explicit pieces); drop-item, shift-member, "
                    "wrong-descriptor (the lowered plan, caught by its "
                    "verifier); flip-byte (a destination byte after the "
                    "engine ran)"),
           cl::init(""), cl::cat(proptestCategory));

namespace {

/// A seeded generator whose draws do not depend on the standard library.
struct Rng {
  std::mt19937_64 gen;
  explicit Rng(uint64_t seed) : gen(seed * 0x9E3779B97F4A7C15ull + 1) {}
  int64_t below(int64_t n) { return static_cast<int64_t>(gen() % n); }
  bool chance(int percent) { return below(100) < percent; }
};

struct RandomMesh {
  std::vector<int64_t> shape;
  std::vector<int64_t> ranks;
};

RandomMesh randomMesh(Rng &rng, int64_t maxDevices) {
  while (true) {
    RandomMesh m;
    int64_t n = 1;
    for (int64_t i = 0, e = rng.below(5); i < e; ++i) {
      m.shape.push_back(1 + rng.below(4));
      n *= m.shape.back();
    }
    if (n <= maxDevices)
      return m;
  }
}

/// Distinct ranks for `n` devices, related to `other` as the mode says.
std::vector<int64_t> pickRanks(Rng &rng, int64_t n,
                               const std::vector<int64_t> &other, int mode) {
  std::vector<int64_t> pool;
  if (mode == 0) { // disjoint
    for (int64_t r = 0; r < n; ++r)
      pool.push_back(100 + r);
  } else { // overlapping: some of the other side's ranks, then new ones
    pool = other;
    std::shuffle(pool.begin(), pool.end(), rng.gen);
    pool.resize(std::min<size_t>(pool.size(), rng.below(n + 1)));
    for (int64_t r = 200; static_cast<int64_t>(pool.size()) < n; ++r)
      pool.push_back(r);
  }
  std::shuffle(pool.begin(), pool.end(), rng.gen);
  pool.resize(n);
  return pool;
}

struct RandomSharding {
  std::vector<std::vector<unsigned>> axes; // per dim
  std::vector<std::vector<int64_t>> blocks;
  std::vector<std::vector<std::pair<int64_t, int64_t>>>
      order;                     // [start, length]
  std::vector<int64_t> dimOrder; // the buffer's dims; empty: row-major
};

/// A random storage order of [0, n): cut into runs, shuffled, with the odd
/// empty run (any start) thrown in; sometimes the logical order spelt out.
std::vector<std::pair<int64_t, int64_t>> randomOrder(Rng &rng, int64_t n) {
  std::vector<int64_t> cuts = {0, n};
  for (int64_t k = 0, nk = rng.below(5); k < nk; ++k)
    cuts.push_back(rng.below(n + 1));
  std::sort(cuts.begin(), cuts.end());
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (size_t k = 0; k + 1 < cuts.size(); ++k)
    runs.push_back({cuts[k], cuts[k + 1] - cuts[k]});
  if (!rng.chance(15))
    std::shuffle(runs.begin(), runs.end(), rng.gen);
  if (rng.chance(20))
    runs.insert(runs.begin() + rng.below(runs.size() + 1),
                {rng.below(n + 3), 0});
  return runs;
}

/// Another spelling of the same sharding: per dim, the logical order
/// spelt out as one run, a run cut in two that continue each other, or an
/// empty run added. The planner puts such tensors in one class.
RandomSharding respelled(Rng &rng, RandomSharding s,
                         const std::vector<int64_t> &shape) {
  for (size_t d = 0; d < shape.size(); ++d) {
    auto &runs = s.order[d];
    if (runs.empty()) {
      if (rng.chance(50))
        runs.push_back({0, shape[d]});
      continue;
    }
    size_t k = rng.below(runs.size());
    auto [start, length] = runs[k];
    if (length >= 2) {
      int64_t cut = 1 + rng.below(length - 1);
      runs[k] = {start, cut};
      runs.insert(runs.begin() + k + 1, {start + cut, length - cut});
    } else {
      runs.insert(runs.begin() + rng.below(runs.size() + 1),
                  {rng.below(shape[d] + 1), 0});
    }
  }
  return s;
}

/// A buffer's dim order over rank dims: the identity spelt out, or
/// shuffled.
std::vector<int64_t> dimOrder(Rng &rng, size_t rank, bool shuffled) {
  std::vector<int64_t> order(rank);
  for (size_t d = 0; d < rank; ++d)
    order[d] = d;
  if (shuffled)
    std::shuffle(order.begin(), order.end(), rng.gen);
  return order;
}

RandomSharding randomSharding(Rng &rng, const std::vector<int64_t> &shape,
                              size_t meshRank) {
  RandomSharding s;
  s.axes.resize(shape.size());
  s.blocks.resize(shape.size());
  if (!shape.empty()) {
    std::vector<unsigned> order(meshRank);
    for (unsigned a = 0; a < meshRank; ++a)
      order[a] = a;
    std::shuffle(order.begin(), order.end(), rng.gen);
    for (unsigned a : order)
      if (rng.chance(65))
        s.axes[rng.below(shape.size())].push_back(a);
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!rng.chance(30))
      continue;
    int64_t left = shape[d];
    for (int64_t b = 0, nb = 1 + rng.below(4); b < nb - 1; ++b) {
      int64_t size = rng.below(left + 1);
      s.blocks[d].push_back(size);
      left -= size;
    }
    s.blocks[d].push_back(left);
  }
  s.order.resize(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    if (rng.chance(30))
      s.order[d] = randomOrder(rng, shape[d]);
  // Sometimes the buffer stores its dims in another order (or the identity
  // spelt out).
  if (shape.size() >= 2 && rng.chance(25))
    s.dimOrder = dimOrder(rng, shape.size(), !rng.chance(15));
  return s;
}

std::string list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string meshIR(const char *name, const RandomMesh &m) {
  std::string axes = "[";
  for (size_t a = 0; a < m.shape.size(); ++a)
    axes += (a ? ", " : "") + llvm::formatv("\"a{0}\"", a).str();
  return llvm::formatv("reshard.mesh @{0} shape = {1} axes = {2}] ranks = "
                       "{3}\n",
                       name, list(m.shape), axes, list(m.ranks));
}

std::string shardingIR(const RandomSharding &s) {
  std::string out = "<[";
  for (size_t d = 0; d < s.axes.size(); ++d) {
    out += d ? ", [" : "[";
    for (size_t j = 0; j < s.axes[d].size(); ++j)
      out += (j ? ", a" : "a") + std::to_string(s.axes[d][j]);
    out += "]";
    if (!s.order[d].empty()) {
      out += " order [";
      for (size_t k = 0; k < s.order[d].size(); ++k)
        out += llvm::formatv("{0}[{1}, {2}]", k ? ", " : "",
                             s.order[d][k].first, s.order[d][k].second)
                   .str();
      out += "]";
    }
    if (!s.blocks[d].empty())
      out += " blocks " + list(s.blocks[d]);
  }
  out += "]";
  if (!s.dimOrder.empty())
    out += " dim_order " + list(s.dimOrder);
  return out + ">";
}

const char *kTypes[] = {"bf16", "f16",  "f32", "f64",  "i8",       "ui8",
                        "i16",  "ui32", "i64", "ui64", "f8E4M3FN", "f8E5M2"};

/// Draws one case and returns its IR.
std::string randomCase(uint64_t seed) {
  Rng rng(seed);
  int64_t maxDevices = maxRanks > 0 ? maxRanks : 24;
  RandomMesh src, dst;
  while (true) {
    src = randomMesh(rng, maxDevices);
    int mode = rng.below(3); // 0 disjoint, 1 identical, 2 overlapping
    dst = mode == 1 && rng.chance(50) ? src : randomMesh(rng, maxDevices);
    int64_t nSrc = 1, nDst = 1;
    for (int64_t s : src.shape)
      nSrc *= s;
    for (int64_t s : dst.shape)
      nDst *= s;
    src.ranks = pickRanks(rng, nSrc, {}, 0);
    if (mode == 1 && dst.shape == src.shape)
      dst.ranks = src.ranks;
    else
      dst.ranks = pickRanks(rng, nDst, src.ranks, mode == 0 ? 0 : 2);
    if (mode == 0)
      for (int64_t &r : dst.ranks)
        r += 1000;
    if (maxRanks <= 0)
      break;
    // Number the ranks in use 0..n-1, in order, when they fit.
    std::set<int64_t> used(src.ranks.begin(), src.ranks.end());
    used.insert(dst.ranks.begin(), dst.ranks.end());
    if (static_cast<int64_t>(used.size()) > maxRanks)
      continue;
    std::map<int64_t, int64_t> number;
    for (int64_t r : used)
      number.try_emplace(r, number.size());
    for (RandomMesh *m : {&src, &dst})
      for (int64_t &r : m->ranks)
        r = number[r];
    break;
  }

  // Mostly 1-D to 3-D tensors (where the interesting splits are), some 0-D
  // and 4-D/5-D ones, and now and then a zero-size dim.
  static const int rankWeights[] = {5, 25, 30, 20, 12, 8};
  int64_t pick = rng.below(100), rank = 0;
  while (pick >= rankWeights[rank])
    pick -= rankWeights[rank++];
  std::vector<int64_t> shape;
  int64_t elements = 1;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t n = 1 + rng.below(elements > 256 ? 3 : 12);
    shape.push_back(n);
    elements *= n;
  }
  if (rank && rng.chance(4))
    shape[rng.below(rank)] = 0;
  RandomSharding srcSharding = randomSharding(rng, shape, src.shape.size());
  RandomSharding dstSharding = randomSharding(rng, shape, dst.shape.size());
  std::string type = "tensor<";
  for (int64_t n : shape)
    type += std::to_string(n) + "x";
  type += kTypes[rng.below(std::size(kTypes))];
  type += ">";
  // Small nodes and domains so that ranks share domains often.
  int64_t node = int64_t(1) << rng.below(3);
  int64_t domain = node << rng.below(3);
  std::string out =
      llvm::formatv("reshard.topology @topo gpus_per_node = {0} "
                    "nvl_domain_size = {1} nvlink_GBps_per_gpu = 450.0 "
                    "nic_GBps_per_gpu = 50.0\n",
                    node, domain)
          .str() +
      meshIR("src", src) + meshIR("dst", dst);
  // Often several tensors of the class: one group of several members, and
  // sometimes a second group on meshes of the same shapes, ranks permuted.
  int64_t numTensors = rng.chance(40) ? 2 + rng.below(5) : 1;
  bool twoGroups = numTensors > 1 && rng.chance(50);
  if (twoGroups) {
    RandomMesh src2 = src, dst2 = dst;
    std::shuffle(src2.ranks.begin(), src2.ranks.end(), rng.gen);
    std::shuffle(dst2.ranks.begin(), dst2.ranks.end(), rng.gen);
    out += meshIR("src2", src2) + meshIR("dst2", dst2);
  }
  for (int64_t k = 0; k < numTensors; ++k) {
    std::string name = numTensors == 1 ? "t" : "t" + std::to_string(k);
    const char *pair = twoGroups && rng.chance(50) ? "2" : "";
    // Drawn in sequence (not as call arguments): one seed, one case.
    bool respell = k && rng.chance(30);
    std::string srcIR =
        shardingIR(respell ? respelled(rng, srcSharding, shape) : srcSharding);
    RandomSharding dst =
        respell ? respelled(rng, dstSharding, shape) : dstSharding;
    // Now and then a tensor whose buffers only order their dims otherwise:
    // a class of its own beside the others.
    if (k && shape.size() >= 2 && rng.chance(15))
      dst.dimOrder = dimOrder(rng, shape.size(), true);
    std::string dstIR = shardingIR(dst);
    out += llvm::formatv("reshard.redistribute @{0} from @src{1} {2} to "
                         "@dst{1} {3} topology @topo : {4} -> {4}\n",
                         name, pair, srcIR, dstIR, type)
               .str();
  }
  return out;
}

/// The passes a case runs, drawn from its seed: every stage of the
/// pipeline is checked the same way.
std::string randomPipeline(uint64_t seed) {
  Rng rng(seed ^ 0x5EED);
  switch (rng.below(4)) {
  case 0:
    return "reshard-intersect";
  case 1:
    return rng.chance(50) ? "reshard-intersect,reshard-select-sources"
                          : "reshard-intersect,reshard-select-sources{"
                            "relay-tree=always}";
  case 2: {
    int64_t budget = 8 << rng.below(6), ops = 2 + rng.below(6);
    bool transits = rng.chance(50);
    // relay-tree=auto (the default) under a small stream limit shares
    // relay lanes between holders or drops the tree.
    std::string tree =
        rng.chance(50) ? "{relay-tree=always}"
        : rng.chance(50)
            ? llvm::formatv("{{relay-tree-max-streams={0}}", rng.below(40))
                  .str()
            : "";
    bool ahead = rng.chance(50);
    return llvm::formatv("reshard-intersect,reshard-select-sources{2},"
                         "reshard-schedule{{staging-budget={0} "
                         "max-ops-per-step={1}{3}{4}}",
                         budget, ops, tree, transits ? " transits=always" : "",
                         ahead ? " receives-ahead=true" : "");
  }
  default:
    int64_t budget = 8 << rng.below(6);
    return llvm::formatv("reshard-intersect,reshard-select-sources{{"
                         "strategy=direct},reshard-schedule{{"
                         "staging-budget={0}{1}}",
                         budget, rng.chance(50) ? " receives-ahead=true" : "");
  }
}

/// Applies the --inject fault to the first piece it fits.
void corrupt(PieceTable &table) {
  // The faults rewrite one piece; the table is rebuilt around it.
  auto rewrite = [&](size_t at, int64_t srcRank, int64_t sizeDelta,
                     int64_t srcOffsetDelta) {
    PieceTable out(table.rank());
    out.holderOffsets = table.holderOffsets;
    out.holderRanks = table.holderRanks;
    for (size_t i = 0; i < table.size(); ++i) {
      PieceTable::Piece p = table[i];
      llvm::SmallVector<int64_t> sizes(p.sizes()), srcOffset(p.srcOffset());
      if (i == at && table.rank()) {
        sizes.back() += sizeDelta;
        srcOffset.back() += srcOffsetDelta;
      }
      out.addPiece(p.dstRank(), i == at ? srcRank : p.srcRank(),
                   p.holderGroup(), p.globalOffset(), sizes, p.dstOffset(),
                   srcOffset, p.via(), p.step());
    }
    table = std::move(out);
  };
  if (inject == "drop-piece" && table.size()) {
    table.rows.resize(table.rows.size() - PieceTable::rowWidth(table.rank()));
    return;
  }
  for (size_t i = 0; i < table.size(); ++i) {
    PieceTable::Piece p = table[i];
    if (inject == "shift-source" && table.rank() && p.sizes().back() > 1) {
      // Read one element further along the last dim of the source box.
      return rewrite(i, p.srcRank(), -1, +1);
    }
    llvm::ArrayRef<int64_t> holders = table.holders(p.holderGroup());
    if (inject == "remote-copy" && p.srcRank() == p.dstRank() &&
        holders.size() > 1)
      return rewrite(
          i, holders.front() == p.dstRank() ? holders.back() : holders.front(),
          0, 0);
  }
}

struct Stats {
  int64_t pieces = 0, localPieces = 0, elements = 0, groupedTensors = 0;
  int64_t plansWithTransits = 0, plansWithRelayTrees = 0;
  int64_t plansWithSharedLanes = 0;
  int64_t plansWithReceivesAhead = 0, plansInParts = 0;
};

/// Checks one tensor's explicit pieces (the reference path): executed,
/// every destination element right, exactly once, holders exact, local
/// copies where the destination holds the box.
std::string checkPieces(const TensorLayout &layout, PieceTable table,
                        Stats &stats) {
  corrupt(table);
  ShardBuffers src = makeCheckBuffers(layout, true);
  ShardBuffers dst = makeCheckBuffers(layout, false);
  if (llvm::Error err = executePieces(layout, table, src, dst))
    return "execution: " + llvm::toString(std::move(err));
  std::vector<Mismatch> mismatches;
  if (int64_t bad = checkDestination(layout, dst, mismatches, 3)) {
    std::string s = llvm::formatv("{0} destination elements wrong", bad);
    for (const Mismatch &m : mismatches)
      s += llvm::formatv("; rank {0} local {1}: expected {2}, got {3}", m.rank,
                         m.localLinearIndex, m.expected, m.actual);
    return s;
  }
  stats.pieces += table.size();
  for (size_t i = 0; i < table.size(); ++i)
    stats.localPieces += table[i].srcRank() == table[i].dstRank();
  for (auto &[rank, bytes] : dst)
    stats.elements += bytes.size() / layout.elementBytes;

  // Exactly once: the pieces of each destination rank cover its shard.
  std::map<int64_t, int64_t> written;
  for (size_t i = 0; i < table.size(); ++i)
    written[table[i].dstRank()] += table[i].numElements();
  for (auto &[rank, shape] : layout.localShapes(false)) {
    int64_t n = 1;
    for (int64_t e : shape)
      n *= e;
    if (written[rank] != n)
      return llvm::formatv("rank {0}: pieces write {1} elements, its shard "
                           "has {2}",
                           rank, written[rank], n);
  }

  // Holders: exactly the source ranks whose shard holds the box's first
  // element; a destination among them copies locally.
  std::map<int64_t, std::set<int64_t>> heldBy; // global index -> ranks
  const SideLayout &s = layout.src;
  for (size_t i = 0; i < s.mesh.ranks.size(); ++i)
    for (int64_t g : referenceGlobalLinearIndices(layout.shape, s.mesh.shape,
                                                  s.sharding, s.mesh.coords(i)))
      heldBy[g].insert(s.mesh.ranks[i]);
  for (size_t i = 0; i < table.size(); ++i) {
    PieceTable::Piece p = table[i];
    int64_t g = 0;
    for (size_t d = 0; d < layout.shape.size(); ++d)
      g = g * layout.shape[d] + p.globalOffset()[d];
    llvm::ArrayRef<int64_t> holders = table.holders(p.holderGroup());
    std::set<int64_t> listed(holders.begin(), holders.end());
    if (listed != heldBy[g])
      return llvm::formatv("piece {0}: holders differ from the ranks that "
                           "hold its first element",
                           i);
    if (listed.count(p.dstRank()) && p.srcRank() != p.dstRank())
      return llvm::formatv("piece {0}: rank {1} holds the box but receives "
                           "it from rank {2}",
                           i, p.dstRank(), p.srcRank());
  }
  return "";
}

/// Applies the --inject faults of the lowered plan; true if one applied.
bool corruptLowered(rt::PlanOp plan) {
  Block &body = plan.getBody().front();
  if (inject == "wrong-descriptor") {
    for (rt::ClassOp cls : body.getOps<rt::ClassOp>())
      for (rt::PieceOp piece : cls.getBody().front().getOps<rt::PieceOp>()) {
        rt::BoxAttr pack = piece.getPack();
        piece.setPackAttr(rt::BoxAttr::get(
            plan.getContext(), pack.getOffset() + cls.getElementBytes(),
            pack.getRun(), pack.getLoops()));
        return true;
      }
    return false;
  }
  // The item lists streams use (copies excluded: their bytes are stated
  // nowhere else).
  std::map<int64_t, SmallVector<Operation *>> users;
  for (rt::RankOp rank : body.getOps<rt::RankOp>())
    for (Operation &op : rank.getBody().front())
      if (auto send = dyn_cast<rt::SendOp>(op))
        users[send.getItems()].push_back(send);
      else if (auto recv = dyn_cast<rt::RecvOp>(op))
        users[recv.getItems()].push_back(recv);
  SmallVector<rt::ItemsOp> lists(body.getOps<rt::ItemsOp>());
  SmallVector<rt::GroupOp> groups(body.getOps<rt::GroupOp>());
  for (rt::ItemsOp items : lists) {
    SmallVector<int64_t> rows(items.getRows());
    if (!users.count(items.getIndex()))
      continue;
    if (inject == "drop-item" && rows.size() >= 10) {
      // Drop the last item and keep the stated bytes consistent, so that
      // only the exactly-once proof can tell.
      rt::GroupOp g = groups[rows[rows.size() - 5]];
      rt::ClassOp cls =
          *std::next(body.getOps<rt::ClassOp>().begin(), g.getClassIndex());
      rt::PieceOp piece =
          *std::next(cls.getBody().front().getOps<rt::PieceOp>().begin(),
                     rows[rows.size() - 4]);
      int64_t bytes = cls.getElementBytes() * rows.back();
      for (int64_t n : piece.getSizes())
        bytes *= n;
      rows.resize(rows.size() - 5);
      items.setRows(rows);
      for (Operation *op : users[items.getIndex()]) {
        auto bytesAttr = op->getAttrOfType<IntegerAttr>("bytes");
        op->setAttr("bytes", IntegerAttr::get(bytesAttr.getType(),
                                              bytesAttr.getInt() - bytes));
      }
      return true;
    }
    if (inject == "shift-member")
      for (size_t i = 0; i < rows.size(); i += 5) {
        int64_t members = groups[rows[i]].getTensors().size();
        if (rows[i + 2] + 1 + (rows[i + 4] - 1) * rows[i + 3] < members) {
          ++rows[i + 2];
          items.setRows(rows);
          return true;
        }
      }
  }
  return false;
}

/// How the engine's messages travel in a case: whole (a third of the
/// cases), or in the MPI backend's parts, with segments from 1 byte up
/// travelling in place and parts cut short.
MessageCut randomCut(uint64_t seed) {
  Rng rng(seed ^ 0x5CA1AB1Eull);
  MessageCut cut;
  if (rng.below(3) == 0)
    return cut;
  cut.directMin = 1 + rng.below(rng.chance(50) ? 8 : 256);
  if (rng.chance(50))
    cut.maxPart = 1 + rng.below(64);
  return cut;
}

/// Runs one case; returns "" or what went wrong.
std::string runCase(MLIRContext &ctx, const std::string &ir,
                    const std::string &pipeline, MessageCut cut, Stats &stats) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &ctx);
  if (!module)
    return "the generated IR does not parse or verify";
  PassManager pm(&ctx);
  if (failed(parsePassPipeline(pipeline, pm)))
    return "bad pipeline " + pipeline;
  if (failed(pm.run(*module)))
    return "the pipeline failed: " + pipeline;
  // The plan must survive a print / parse round trip.
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  OwningOpRef<ModuleOp> reparsed = parseSourceString<ModuleOp>(text, &ctx);
  if (!reparsed)
    return "the planned IR does not parse back";
  FailureOr<PlanModule> plan = PlanModule::load(*reparsed, "reshard-proptest");
  if (failed(plan))
    return "the planned module does not load";
  for (const PlanGroup &g : plan->model.groups)
    stats.groupedTensors += g.numMembers() > 1 ? g.numMembers() : 0;
  stats.plansWithTransits += !plan->model.transits.empty();
  stats.plansWithSharedLanes += plan->model.relayLaneSpan > 1;
  stats.plansWithReceivesAhead +=
      plan->model.schedule && plan->model.schedule->receivesAhead;
  stats.plansWithRelayTrees +=
      llvm::any_of(plan->model.groups, [](const PlanGroup &g) {
        return llvm::any_of(g.routes,
                            [](const RouteRow &r) { return r.feeder >= 0; });
      });

  // The enumerating reference: reshard-expand's explicit pieces.
  SymbolTableCollection symbols;
  {
    OwningOpRef<ModuleOp> expanded = reparsed->clone();
    PassManager expand(&ctx);
    expand.addPass(createReshardExpand());
    if (failed(expand.run(*expanded)))
      return "reshard-expand failed";
    FailureOr<llvm::StringMap<PiecesOp>> pieces = collectPieces(*expanded);
    if (failed(pieces))
      return "reshard-expand left a tensor without pieces";
    for (RedistributeOp op : expanded->getOps<RedistributeOp>()) {
      FailureOr<TensorLayout> layout = getTensorLayout(op, symbols);
      if (failed(layout))
        return "no layout";
      std::string err = checkPieces(
          *layout, pieces->lookup(op.getSymName()).toTable(), stats);
      if (!err.empty())
        return plan->model.numTensors() == 1
                   ? err
                   : "tensor '" + layout->name + "': " + err;
    }
  }

  // Balanced routing crosses the network exactly as often as it must.
  PlanReport report = buildReport(plan->model);
  if (pipeline.find("select-sources,") != std::string::npos ||
      llvm::StringRef(pipeline).ends_with("select-sources")) {
    if (report.plan.bytes[kNetwork] != report.bounds.networkBytes)
      return llvm::formatv("network bytes {0} differ from the lower bound "
                           "{1}",
                           report.plan.bytes[kNetwork],
                           report.bounds.networkBytes);
  }
  // No plan beats the physical lower bound, the baselines included: a
  // plan under it would prove a term wrong.
  {
    for (auto [name, f] : {std::pair{"plan", &report.plan},
                           {"direct", &report.direct},
                           {"gather-broadcast", &report.gatherBroadcast}}) {
      int64_t busiest = std::max(f->busiestNicOutBytes, f->busiestNicInBytes);
      if (busiest < report.bounds.perNicBytes)
        return llvm::formatv("{0}: busiest NIC {1} B under the bound {2} B",
                             name, busiest, report.bounds.perNicBytes);
      if (f->estimatedSeconds < report.bounds.seconds * (1 - 1e-9))
        return llvm::formatv("{0}: estimated {1} s under the bound {2} s "
                             "({3})",
                             name, f->estimatedSeconds, report.bounds.seconds,
                             report.bounds.binding);
    }
  }

  // The compact plan: lowered, round-tripped, verified, and run by the
  // execution engine's loops, must deliver the same elements.
  OwningOpRef<ModuleOp> lowered = reparsed->clone();
  PassManager lower(&ctx);
  lower.addPass(createConvertReshardToRuntime());
  if (failed(lower.run(*lowered)))
    return "convert-reshard-to-runtime failed";
  std::string loweredText;
  llvm::raw_string_ostream los(loweredText);
  lowered->print(los);
  OwningOpRef<ModuleOp> loweredBack =
      parseSourceString<ModuleOp>(loweredText, &ctx);
  if (!loweredBack)
    return "the lowered plan does not parse back";
  auto plans = loweredBack->getOps<rt::PlanOp>();
  if (plans.empty())
    return "the lowering produced no reshard_rt.plan";
  rt::PlanOp planOp = *plans.begin();
  if (corruptLowered(planOp) && succeeded(verify(*loweredBack)))
    return "the lowered plan still verifies after --inject=" + inject;
  if (failed(verify(*loweredBack)))
    return "the lowered plan does not verify (--inject=" + inject + ")";
  std::vector<TensorLayout> layouts;
  std::vector<ShardBuffers> srcs, dsts;
  for (RedistributeOp op : reparsed->getOps<RedistributeOp>()) {
    layouts.push_back(*getTensorLayout(op, symbols));
    srcs.push_back(makeCheckBuffers(layouts.back(), true));
    dsts.push_back(makeCheckBuffers(layouts.back(), false));
  }
  stats.plansInParts += cut.directMin > 0;
  if (llvm::Error err = executeRuntimePlan(planOp, srcs, dsts, cut))
    return "lowered execution: " + llvm::toString(std::move(err));
  if (inject == "flip-byte")
    for (ShardBuffers &d : dsts)
      for (auto &[rank, bytes] : d)
        if (!bytes.empty()) {
          bytes[bytes.size() / 2] ^= 0x40;
          goto flipped;
        }
flipped:
  for (size_t t = 0; t < layouts.size(); ++t) {
    std::vector<Mismatch> wrong;
    if (int64_t bad = checkDestination(layouts[t], dsts[t], wrong, 1))
      return llvm::formatv("the lowered plan leaves {0} destination elements "
                           "of tensor '{1}' wrong (first: rank {2} local {3})",
                           bad, layouts[t].name, wrong[0].rank,
                           wrong[0].localLinearIndex);
  }
  return "";
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(proptestCategory); // not LLVM's codegen options
  cl::ParseCommandLineOptions(argc, argv,
                              "reshard property tests: random layouts\n");
  static const char *const faults[] = {
      "",          "drop-piece",   "shift-source",     "remote-copy",
      "drop-item", "shift-member", "wrong-descriptor", "flip-byte"};
  if (llvm::find(faults, inject) == std::end(faults)) {
    llvm::errs() << "reshard-proptest: unknown --inject=" << inject
                 << " (see --help)\n";
    return 2;
  }
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllPasses();
  MLIRContext ctx(registry, MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  // Diagnostics go to stderr with the case's seed printed after them.
  ctx.printOpOnDiagnostic(false);

  uint64_t failures = 0;
  Stats stats;
  for (uint64_t seed = firstSeed; seed < firstSeed + numCases; ++seed) {
    std::string ir = randomCase(seed);
    std::string pipeline = randomPipeline(seed);
    if (dump)
      llvm::outs() << "// seed " << seed << ", pipeline: " << pipeline << "\n"
                   << ir;
    std::string err = runCase(ctx, ir, pipeline, randomCut(seed), stats);
    if (err.empty())
      continue;
    if (++failures <= 5)
      llvm::errs() << "FAILED seed " << seed << ": " << err
                   << "\n  replay: reshard-proptest --seed " << seed
                   << " --cases 1 --dump > case.mlir; reshard-opt case.mlir "
                      "--pass-pipeline='builtin.module("
                   << pipeline << ")' | reshard-run - --check\n"
                   << ir;
  }
  llvm::outs() << llvm::formatv(
      "{0}checked {1} pieces ({2} local copies), {3} destination elements, "
      "{4} tensors in groups of several, {5} plans with transits, {6} with "
      "relay trees, {7} with relay lanes shared by several holders, {8} "
      "with receives posted ahead, {9} run in the MPI backend's parts\n",
      dump ? "// " : "", stats.pieces, stats.localPieces, stats.elements,
      stats.groupedTensors, stats.plansWithTransits, stats.plansWithRelayTrees,
      stats.plansWithSharedLanes, stats.plansWithReceivesAhead,
      stats.plansInParts);
  llvm::outs() << llvm::formatv("{0}property: {1} passed, {2} failed\n",
                                dump ? "// " : "", numCases - failures,
                                failures);
  return failures ? 1 : 0;
}
