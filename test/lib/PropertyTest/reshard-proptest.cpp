//===- reshard-proptest.cpp - Random layouts, planned and checked ---------===//
//
// Each case draws a random pair of layouts (meshes up to 4-D, tensors 0-D to
// 5-D, uneven and empty chunks, blocks, several axes on one dim, replication,
// disjoint / identical / overlapping rank sets), writes it as reshard IR,
// parses and verifies it, runs reshard-intersect, round-trips the result
// through text, executes the pieces on host memory and checks every
// destination element against the element-by-element reference layout. It
// also checks that each piece lists exactly the source ranks that hold it,
// that a destination holding a box copies it locally, and that every
// destination element is written exactly once.
//
//   reshard-proptest --cases 10000 --seed 1     the suite's run
//   reshard-proptest --seed N --cases 1 --dump  replay one case, print its IR
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"
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

static cl::opt<uint64_t> firstSeed("seed", cl::desc("First seed"), cl::init(1));
static cl::opt<uint64_t> numCases("cases", cl::desc("Number of cases"),
                                  cl::init(1000));
static cl::opt<bool> dump("dump", cl::desc("Print each case's IR"));
static cl::opt<int64_t> maxRanks(
    "max-ranks",
    cl::desc("Use at most N distinct global ranks, numbered 0..N-1 (for "
             "cases run under mpirun; default: no limit)"),
    cl::init(0));
static cl::opt<std::string>
    inject("inject",
           cl::desc("Corrupt each plan before checking it, to show the checks "
                    "catch it: drop-piece, shift-source, remote-copy"),
           cl::init(""));

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
};

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
    if (!s.blocks[d].empty())
      out += " blocks " + list(s.blocks[d]);
  }
  return out + "]>";
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
  return llvm::formatv("reshard.topology @topo gpus_per_node = {0} "
                       "nvl_domain_size = {1} nvlink_GBps_per_gpu = 450.0 "
                       "nic_GBps_per_gpu = 50.0\n",
                       node, domain)
             .str() +
         meshIR("src", src) + meshIR("dst", dst) +
         llvm::formatv("reshard.redistribute @t from @src {0} to @dst {1} "
                       "topology @topo : {2} -> {2}\n",
                       shardingIR(srcSharding), shardingIR(dstSharding), type)
             .str();
}

/// The passes a case runs, drawn from its seed: every stage of the
/// pipeline is checked the same way.
std::string randomPipeline(uint64_t seed) {
  Rng rng(seed ^ 0x5EED);
  switch (rng.below(4)) {
  case 0:
    return "reshard-intersect";
  case 1:
    return "reshard-intersect,reshard-select-sources";
  case 2:
    return llvm::formatv("reshard-intersect,reshard-select-sources,"
                         "reshard-schedule{{staging-budget={0} "
                         "max-ops-per-step={1}}",
                         8 << rng.below(6), 2 + rng.below(6));
  default:
    return llvm::formatv("reshard-intersect,reshard-select-sources{{"
                         "strategy=direct},reshard-schedule{{"
                         "staging-budget={0}}",
                         8 << rng.below(6));
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
  int64_t pieces = 0, localPieces = 0, elements = 0;
};

/// Runs one case; returns "" or what went wrong.
std::string runCase(MLIRContext &ctx, const std::string &ir,
                    const std::string &pipeline, Stats &stats) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &ctx);
  if (!module)
    return "the generated IR does not parse or verify";
  PassManager pm(&ctx);
  if (failed(parsePassPipeline(pipeline, pm)))
    return "bad pipeline " + pipeline;
  if (failed(pm.run(*module)))
    return "the pipeline failed: " + pipeline;
  // The pieces must survive a print / parse round trip.
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  OwningOpRef<ModuleOp> reparsed = parseSourceString<ModuleOp>(text, &ctx);
  if (!reparsed)
    return "the planned IR does not parse back";

  SymbolTableCollection symbols;
  if (reparsed->getOps<PiecesOp>().empty())
    return "the pipeline produced no piece table";
  auto op = *reparsed->getOps<RedistributeOp>().begin();
  auto piecesOp = *reparsed->getOps<PiecesOp>().begin();
  FailureOr<TensorLayout> layout = getTensorLayout(op, symbols);
  if (failed(layout))
    return "no layout";
  PieceTable table = piecesOp.toTable();
  corrupt(table);

  ShardBuffers src = makeCheckBuffers(*layout, true);
  ShardBuffers dst = makeCheckBuffers(*layout, false);
  if (llvm::Error err = executePieces(*layout, table, src, dst))
    return "execution: " + llvm::toString(std::move(err));
  std::vector<Mismatch> mismatches;
  if (int64_t bad = checkDestination(*layout, dst, mismatches, 3)) {
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
    stats.elements += bytes.size() / layout->elementBytes;

  // Balanced routing crosses the network exactly as often as it must.
  if (pipeline.find("select-sources,") != std::string::npos ||
      llvm::StringRef(pipeline).ends_with("select-sources")) {
    std::optional<TopologySpec> topo;
    if (auto t = reparsed->getOps<TopologyOp>(); !t.empty())
      topo = (*t.begin()).toSpec();
    PlannedTensor pt{*layout, table, topo};
    PlanReport report = buildReport(llvm::ArrayRef<PlannedTensor>(pt));
    if (report.plan.bytes[kNetwork] != report.bounds.networkBytes)
      return llvm::formatv("network bytes {0} differ from the lower bound "
                           "{1}",
                           report.plan.bytes[kNetwork],
                           report.bounds.networkBytes);
  }

  // The lowered per-rank programs, run with the runtime's own loops, must
  // deliver the same elements.
  {
    OwningOpRef<ModuleOp> lowered = reparsed->clone();
    PassManager lower(&ctx);
    lower.addPass(createConvertReshardToRuntime());
    if (failed(lower.run(*lowered)))
      return "convert-reshard-to-runtime failed";
    auto plans = lowered->getOps<rt::PlanOp>();
    if (plans.empty())
      return "the lowering produced no reshard_rt.plan";
    std::vector<ShardBuffers> srcs = {makeCheckBuffers(*layout, true)};
    std::vector<ShardBuffers> dsts = {makeCheckBuffers(*layout, false)};
    if (llvm::Error err = executeRuntimePlan(*plans.begin(), srcs, dsts))
      return "lowered execution: " + llvm::toString(std::move(err));
    std::vector<Mismatch> wrong;
    if (int64_t bad = checkDestination(*layout, dsts[0], wrong, 1))
      return llvm::formatv("the lowered plan leaves {0} destination elements "
                           "wrong (first: rank {1} local {2})",
                           bad, wrong[0].rank, wrong[0].localLinearIndex);
  }

  // Exactly once: the pieces of each destination rank cover its shard.
  std::map<int64_t, int64_t> written;
  for (size_t i = 0; i < table.size(); ++i)
    written[table[i].dstRank()] += table[i].numElements();
  for (auto &[rank, shape] : layout->localShapes(false)) {
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
  const SideLayout &s = layout->src;
  for (size_t i = 0; i < s.mesh.ranks.size(); ++i)
    for (int64_t g : referenceGlobalLinearIndices(layout->shape, s.mesh.shape,
                                                  s.sharding, s.mesh.coords(i)))
      heldBy[g].insert(s.mesh.ranks[i]);
  for (size_t i = 0; i < table.size(); ++i) {
    PieceTable::Piece p = table[i];
    int64_t g = 0;
    for (size_t d = 0; d < layout->shape.size(); ++d)
      g = g * layout->shape[d] + p.globalOffset()[d];
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

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "reshard property tests: random layouts\n");
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
    std::string err = runCase(ctx, ir, pipeline, stats);
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
      "{0}checked {1} pieces ({2} local copies), {3} destination elements\n",
      dump ? "// " : "", stats.pieces, stats.localPieces, stats.elements);
  llvm::outs() << llvm::formatv("{0}property: {1} passed, {2} failed\n",
                                dump ? "// " : "", numCases - failures,
                                failures);
  return failures ? 1 : 0;
}
