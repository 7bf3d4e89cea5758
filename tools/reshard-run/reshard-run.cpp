//===- reshard-run.cpp - Execute a plan for all ranks on host memory ------===//
//
//   reshard-run FILE --check            fill sources with each element's
//                                       global index, run, check every
//                                       destination element
//   reshard-run FILE --src DIR --dst DIR
//                                       shards from/to DIR/rank<R>.<tensor>.bin
//                                       (a quantized tensor's scales to
//                                       rank<R>.<tensor>.scale.bin)
//
// FILE is the layout JSON or reshard IR at any stage: a layout is planned
// first with reshard-plan-pipeline (lower=false, default options), so that
// --check checks the plan the compiler makes; a lowered reshard_rt plan runs
// with --src/--dst.
//
//===----------------------------------------------------------------------===//
#include "reshard/Compile/Compile.h"
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"
#include "reshard/Dialect/Runtime/IR/PlanEncoding.h"
#include "reshard/Plan/Expansion.h"
#include "reshard/Reference/CheckPattern.h"
#include "reshard/Reference/PieceInterpreter.h"
#include "reshard/Reference/QuantCheck.h"
#include "reshard/Reference/RuntimeInterpreter.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <set>

using namespace mlir;
using namespace reshard;
namespace cl = llvm::cl;

static cl::OptionCategory runCategory("reshard-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<plan .mlir or layout .json>"),
                                      cl::cat(runCategory));
static cl::opt<bool>
    checkMode("check",
              cl::desc("Fill sources with the global index of each element, "
                       "run, and check every destination element (then again "
                       "with --pattern=hash, unless --pattern is given)"),
              cl::cat(runCategory));
static cl::opt<CheckPattern> patternOption(
    "pattern",
    cl::desc("What --check, --make-sources and --verify put in each element, "
             "from its global row-major linear index"),
    cl::values(clEnumValN(CheckPattern::Index, "index",
                          "the index, truncated to the element size "
                          "(default)"),
               clEnumValN(CheckPattern::Hash, "hash",
                          "a hash of the index (splitmix64), truncated: an "
                          "element moved by 2^8 or 2^16 places shows too")),
    cl::init(CheckPattern::Index), cl::cat(runCategory));
static cl::opt<std::string>
    srcDir("src", cl::desc("Read source shards from DIR/rank<R>.<tensor>.bin"),
           cl::value_desc("DIR"), cl::cat(runCategory));
static cl::opt<std::string>
    dstDir("dst",
           cl::desc("Write destination shards to DIR/rank<R>.<tensor>.bin "
                    "(a quantized tensor's scales to "
                    "DIR/rank<R>.<tensor>.scale.bin; the engine runs them)"),
           cl::value_desc("DIR"), cl::cat(runCategory));
static cl::opt<std::string> makeSourcesDir(
    "make-sources",
    cl::desc("Write every source rank's shard, filled with the --check "
             "pattern, to DIR/rank<R>.<tensor>.bin; run nothing"),
    cl::value_desc("DIR"), cl::cat(runCategory));
static cl::opt<std::string> verifyDir(
    "verify",
    cl::desc("Check every destination shard in DIR/rank<R>.<tensor>.bin "
             "against the --check pattern (e.g. after an MPI run of sources "
             "made by --make-sources); run nothing"),
    cl::value_desc("DIR"), cl::cat(runCategory));
static cl::opt<uint64_t> maxHostBytes(
    "max-host-bytes",
    cl::desc("Refuse a tensor whose shards (all ranks, both sides) need more "
             "host memory than this (default 16 GiB)"),
    cl::init(uint64_t(16) << 30), cl::cat(runCategory));
static cl::opt<bool> engineMode(
    "engine",
    cl::desc("Lower the plan and run every rank's reshard_rt program with the "
             "execution engine (the MPI backend's code) instead of the "
             "reference piece interpreter"),
    cl::cat(runCategory));
static cl::opt<unsigned>
    maxMismatches("max-mismatches",
                  cl::desc("Mismatches printed per tensor (default 10)"),
                  cl::init(10), cl::cat(runCategory));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "reshard-run: error: " << msg << "\n";
  return 1;
}

/// Whether `op` is a quantized payload or its scales: the piece
/// interpreter moves bytes, only the execution engine quantizes.
static bool isQuantized(RedistributeOp op) {
  return op.getDstSharding().isQuantized() || op->hasAttr(kScalesOfAttr);
}

static std::string shardPath(StringRef dir, int64_t rank, StringRef tensor) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path,
                          llvm::formatv("rank{0}.{1}.bin", rank, tensor).str());
  return std::string(path);
}

static std::string fmtShape(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Checks, before anything is read or written, that a shard file is a
/// regular file of exactly `expected` bytes. An empty shard may have no
/// file. `detail` describes the shard in the size message.
static bool checkShardFileBytes(StringRef path, const char *side, int64_t rank,
                                int64_t expected, const Twine &detail) {
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(path, status)) {
    if (ec == std::errc::no_such_file_or_directory && expected == 0)
      return true;
    fail(path + ": cannot read the " + side + " shard of rank " + Twine(rank) +
         ": " + ec.message());
    return false;
  }
  if (status.type() != llvm::sys::fs::file_type::regular_file) {
    fail(path + ": the " + side + " shard of rank " + Twine(rank) +
         " is not a regular file");
    return false;
  }
  if (static_cast<int64_t>(status.getSize()) != expected) {
    fail(llvm::formatv("{0}: has {1} bytes but rank {2}'s shard of {3} has "
                       "{4}",
                       path, status.getSize(), rank, detail.str(), expected)
             .str());
    return false;
  }
  return true;
}

static bool checkShardFile(const TensorLayout &layout, StringRef dir,
                           const char *side, int64_t rank,
                           ArrayRef<int64_t> shape) {
  return checkShardFileBytes(
      shardPath(dir, rank, layout.name), side, rank, layout.shardBytes(shape),
      llvm::formatv("'{0}' (local shape {1}, {2} bytes per element)",
                    layout.name, fmtShape(shape), layout.elementBytes));
}

static bool checkSourceFile(const TensorLayout &layout, int64_t rank,
                            ArrayRef<int64_t> shape) {
  return checkShardFile(layout, srcDir, "source", rank, shape);
}

/// Tensor names become file names: refuse those that would leave the
/// directory or be cut short.
static bool checkFileName(StringRef name) {
  if (name.contains('/') || name.contains('\0')) {
    std::string shown;
    llvm::raw_string_ostream os(shown);
    llvm::printEscapedString(name, os);
    fail("tensor '" + shown +
         "' cannot name a shard file (it contains '/' "
         "or a NUL byte); rename the tensor to use --src/--dst");
    return false;
  }
  return true;
}

static bool checkFileName(const TensorLayout &layout) {
  return checkFileName(layout.name);
}

/// Checks, before anything is written, that the destination directory is
/// one (or does not exist yet: it is created) and that no shard file to
/// write is in the way (a directory).
static bool checkDestinationDir() {
  if (llvm::sys::fs::exists(dstDir) && !llvm::sys::fs::is_directory(dstDir)) {
    fail(dstDir + ": the destination is not a directory");
    return false;
  }
  return true;
}

static bool checkDestinationFile(int64_t rank, StringRef tensor) {
  std::string path = shardPath(dstDir, rank, tensor);
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(path, status) &&
      status.type() != llvm::sys::fs::file_type::regular_file) {
    fail(path + ": cannot write the destination shard of rank " + Twine(rank) +
         " (something that is not a file is in the way)");
    return false;
  }
  return true;
}

static bool checkDestinations(const TensorLayout &layout) {
  if (!checkDestinationDir())
    return false;
  for (auto &[rank, shape] : layout.localShapes(/*source=*/false))
    if (!checkDestinationFile(rank, layout.name))
      return false;
  return true;
}

/// Host bytes of every shard of both sides.
static uint64_t hostBytes(const TensorLayout &layout) {
  std::optional<uint64_t> total = 0;
  for (bool source : {true, false})
    for (auto &[rank, shape] : layout.localShapes(source))
      if (!(total = llvm::checkedAddUnsigned(
                *total, static_cast<uint64_t>(layout.shardBytes(shape)))))
        return UINT64_MAX;
  return *total;
}

/// Whether every shard of `layout` fits under --max-host-bytes; says why
/// not.
static bool fitsHostMemory(const TensorLayout &layout) {
  uint64_t bytes = hostBytes(layout);
  if (bytes <= maxHostBytes)
    return true;
  fail(llvm::formatv("tensor '{0}' needs {1} bytes of host memory for its "
                     "shards, more than --max-host-bytes ({2})",
                     layout.name, bytes, maxHostBytes.getValue())
           .str());
  return false;
}

/// Reads every shard of one side from `dir`, checking its exact size.
/// Reads one shard file whose size was checked; an empty shard reads
/// nothing (its file may be missing).
static bool readShardFile(StringRef path, int64_t bytes,
                          std::vector<uint8_t> &out) {
  out.clear();
  if (bytes == 0)
    return true;
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (!buf) {
    fail(path + ": cannot read: " + buf.getError().message());
    return false;
  }
  StringRef data = (*buf)->getBuffer();
  out.assign(data.begin(), data.end());
  return true;
}

static bool readShards(const TensorLayout &layout, StringRef dir, bool source,
                       ShardBuffers &out) {
  for (auto &[rank, shape] : layout.localShapes(source))
    if (!checkShardFile(layout, dir, source ? "source" : "destination", rank,
                        shape) ||
        !readShardFile(shardPath(dir, rank, layout.name),
                       layout.shardBytes(shape), out[rank]))
      return false;
  return true;
}

static bool writeShards(StringRef name, StringRef dir,
                        const ShardBuffers &shards) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    fail(dir + ": cannot create the directory: " + ec.message());
    return false;
  }
  for (auto &[rank, bytes] : shards) {
    std::string path = shardPath(dir, rank, name);
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
    if (ec) {
      fail(path + ": cannot write: " + ec.message());
      return false;
    }
    os.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    os.close();
    if (os.has_error()) {
      fail(path + ": write failed: " + os.error().message());
      os.clear_error();
      return false;
    }
  }
  return true;
}

/// --src/--dst on a lowered plan: every rank's reshard_rt program run in
/// this process with the runtime's own loops (the code the MPI backend
/// runs). The plan states shard sizes, not layouts, so nothing can be
/// filled or checked element by element here.
static int runLoweredPlan(rt::PlanOp plan) {
  if (srcDir.empty())
    return fail("a lowered reshard_rt.plan has shard sizes but no layouts, "
                "so --check, --make-sources and --verify need the module "
                "before --convert-reshard-to-runtime; --src DIR --dst DIR "
                "runs it");
  if (!checkDestinationDir())
    return 1;
  SmallVector<StringRef> names;
  for (Attribute name : plan.getTensors())
    names.push_back(cast<StringAttr>(name).getValue());
  for (StringRef name : names)
    if (!checkFileName(name))
      return 1;
  std::vector<ShardBuffers> src(names.size()), dst(names.size());
  std::unique_ptr<rt::EncodedPlan> encoded = rt::EncodedPlan::encode(plan);
  if (!encoded)
    return 1;
  const engine::Plan &view = encoded->view();
  // Every rank of a mesh has shards, with work to do or not.
  std::set<int64_t> ranks;
  for (int64_t m = 0; m < view.num_meshes; ++m)
    for (int64_t i = 0; i < view.meshes[m].num_ranks; ++i)
      ranks.insert(view.words[view.meshes[m].ranks + i]);
  uint64_t host = 0;
  std::vector<int64_t> srcBytes(names.size()), dstBytes(names.size());
  for (int64_t rank : ranks) {
    engine::shard_table(view, rank, true, srcBytes.data());
    engine::shard_table(view, rank, false, dstBytes.data());
    for (size_t t = 0; t < names.size(); ++t) {
      for (int64_t b : {srcBytes[t], dstBytes[t]})
        if (b > 0)
          host = llvm::checkedAddUnsigned(host, static_cast<uint64_t>(b))
                     .value_or(UINT64_MAX);
      if (host > maxHostBytes)
        return fail(llvm::formatv("the plan's shards need more than "
                                  "--max-host-bytes ({0}) of host memory",
                                  maxHostBytes.getValue())
                        .str());
      if (srcBytes[t] >= 0 &&
          !checkShardFileBytes(shardPath(srcDir, rank, names[t]), "source",
                               rank, srcBytes[t], "'" + names[t] + "'"))
        return 1;
      if (dstBytes[t] < 0)
        continue;
      if (!checkDestinationFile(rank, names[t]))
        return 1;
      dst[t][rank].assign(dstBytes[t], 0);
    }
  }
  // Everything checked: now read.
  for (int64_t rank : ranks) {
    engine::shard_table(view, rank, true, srcBytes.data());
    for (size_t t = 0; t < names.size(); ++t)
      if (srcBytes[t] >= 0 && !readShardFile(shardPath(srcDir, rank, names[t]),
                                             srcBytes[t], src[t][rank]))
        return 1;
  }
  if (llvm::Error err = executeRuntimePlan(plan, src, dst))
    return fail(llvm::toString(std::move(err)));
  for (size_t t = 0; t < names.size(); ++t)
    if (!writeShards(names[t], dstDir, dst[t]))
      return 1;
  llvm::outs() << llvm::formatv("ran the lowered plan @{0}: {1} tensors; "
                                "wrote {2}\n",
                                plan.getSymName(), names.size(), dstDir);
  return 0;
}

/// Parses (or imports) the input. The source manager and diagnostic handler
/// it sets up outlive this call, so later errors point at input lines.
static OwningOpRef<ModuleOp>
load(MLIRContext &ctx, std::shared_ptr<llvm::SourceMgr> &sourceMgr,
     std::unique_ptr<SourceMgrDiagnosticHandler> &diagHandler) {
  std::string err;
  auto file = openInputFile(inputFile, &err);
  if (!file) {
    fail(err);
    return nullptr;
  }
  auto sm = std::make_shared<llvm::SourceMgr>();
  sm->AddNewSourceBuffer(std::move(file), SMLoc());
  sourceMgr = sm;
  diagHandler = std::make_unique<SourceMgrDiagnosticHandler>(*sm, &ctx);
  OwningOpRef<ModuleOp> module = loadInput(sm, &ctx);
  if (!module)
    return nullptr;
  FailureOr<Stage> stage = getStage(*module);
  if (failed(stage))
    return nullptr;
  // A layout is planned as the compiler plans it (without the lowering),
  // once it is known to fit in host memory.
  if (*stage == Stage::Layout) {
    SymbolTableCollection symbols;
    for (RedistributeOp op : module->getOps<RedistributeOp>()) {
      // Planning decides where a quantized tensor is quantized; its size
      // is checked with the others after it.
      if (op.getDstSharding().isQuantized())
        continue;
      FailureOr<TensorLayout> layout = getTensorLayout(op, symbols);
      if (failed(layout) || !fitsHostMemory(*layout))
        return nullptr;
    }
    if (failed(planModule(*module, ReshardPlanOptions(), Stage::Layout)))
      return nullptr;
  }
  return module;
}

/// An allocation that fails ends the run with an error, not LLVM's abort
/// and stack dump: --max-host-bytes may be above what this host has.
[[noreturn]] static void outOfMemory() {
  llvm::errs() << "reshard-run: error: out of host memory (the shards and "
                  "their checks need more than this host can give; lower "
                  "--max-host-bytes to be refused before allocating, or run "
                  "on a larger host)\n";
  std::_Exit(1);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  std::set_new_handler(outOfMemory);
  llvm::install_bad_alloc_error_handler(
      [](void *, const char *, bool) { outOfMemory(); });
  cl::HideUnrelatedOptions(runCategory); // not LLVM's codegen options
  cl::ParseCommandLineOptions(
      argc, argv,
      "reshard-run: execute a redistribution plan for every rank in one "
      "process on host memory\n");
  int modes = checkMode + (!srcDir.empty() || !dstDir.empty()) +
              !makeSourcesDir.empty() + !verifyDir.empty();
  if (modes != 1)
    return fail("give exactly one of --check, --src DIR --dst DIR, "
                "--make-sources DIR, --verify DIR");
  if (!checkMode && makeSourcesDir.empty() && verifyDir.empty() &&
      (srcDir.empty() || dstDir.empty()))
    return fail("--src DIR and --dst DIR go together");

  DialectRegistry registry;
  registerCompileDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  ctx.printOpOnDiagnostic(false);
  std::shared_ptr<llvm::SourceMgr> sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> diagHandler;
  OwningOpRef<ModuleOp> module = load(ctx, sourceMgr, diagHandler);
  if (!module)
    return 1;

  auto lowered = module->getOps<rt::PlanOp>();
  if (!lowered.empty()) {
    if (std::next(lowered.begin()) != lowered.end() ||
        !module->getOps<RedistributeOp>().empty())
      return fail("the module must hold one lowered reshard_rt.plan and "
                  "nothing else to run");
    return runLoweredPlan(*lowered.begin());
  }

  // The explicit pieces of each tensor: written in the module (the
  // reference form), or expanded one tensor at a time from its group.
  FailureOr<Stage> stage = getStage(*module);
  if (failed(stage))
    return 1;
  llvm::StringMap<PiecesOp> piecesOf;
  std::optional<PlanModule> planned;
  if (*stage == Stage::Explicit) {
    FailureOr<llvm::StringMap<PiecesOp>> found = collectPieces(*module);
    if (failed(found))
      return 1;
    piecesOf = std::move(*found);
  } else {
    FailureOr<PlanModule> loaded = PlanModule::load(*module, "reshard-run");
    if (failed(loaded))
      return 1;
    planned = std::move(*loaded);
  }
  auto tableOf = [&](size_t t, RedistributeOp op) -> PieceTable {
    if (planned)
      return expandPieces(planned->model, t);
    return piecesOf.lookup(op.getSymName()).toTable();
  };

  // Everything that can be checked is checked before any file is written.
  SymbolTableCollection symbols;
  std::vector<TensorLayout> layouts;
  SmallVector<RedistributeOp> ops(module->getOps<RedistributeOp>());
  // --src/--dst quantize with the engine (the MPI backend's host loops).
  bool files = !checkMode && makeSourcesDir.empty() && verifyDir.empty();
  bool engineMode = ::engineMode || (files && llvm::any_of(ops, isQuantized));
  // The caller's source shards: a payload quantized on its senders moves
  // FP8 but starts at the source's precision; scales have none.
  std::vector<std::optional<TensorLayout>> callerSources;
  uint64_t allHostBytes = 0;
  for (auto [t, op] : llvm::enumerate(ops)) {
    FailureOr<TensorLayout> layout = getTensorLayout(op, symbols);
    if (failed(layout))
      return 1;
    if (!engineMode) {
      PieceTable table = tableOf(t, op);
      if (llvm::Error err = validatePieces(*layout, table)) {
        Operation *at = planned
                            ? op.getOperation()
                            : piecesOf.lookup(op.getSymName()).getOperation();
        at->emitError(llvm::toString(std::move(err)));
        return 1;
      }
    }
    // The caller's source elements: a payload its senders quantize moves
    // FP8 but starts at the source's precision (an upper bound for both
    // sides of the shards as held).
    int64_t sourceBytes =
        *getElementTypeBytes(op.getSrcTensorType().getElementType());
    TensorLayout held = *layout;
    held.elementBytes = std::max(held.elementBytes, sourceBytes);
    if (!fitsHostMemory(held))
      return 1;
    allHostBytes = llvm::checkedAddUnsigned(allHostBytes, hostBytes(held))
                       .value_or(UINT64_MAX);
    callerSources.emplace_back();
    if (!op->hasAttr(kScalesOfAttr)) {
      callerSources.back() = *layout;
      callerSources.back()->elementBytes = sourceBytes;
    }
    if (!makeSourcesDir.empty() || !verifyDir.empty()) {
      if (!checkFileName(*layout))
        return 1;
    } else if (!checkMode) {
      if (!checkFileName(*layout) || !checkDestinations(*layout))
        return 1;
      if (const std::optional<TensorLayout> &callers = callerSources.back())
        for (auto &[rank, shape] : callers->localShapes(/*source=*/true))
          if (!checkSourceFile(*callers, rank, shape))
            return 1;
    }
    layouts.push_back(std::move(*layout));
  }
  // The engine runs every tensor at once: all shards are in memory.
  if (engineMode && allHostBytes > maxHostBytes)
    return fail(llvm::formatv("{0} holds every shard of every tensor; they "
                              "need {1} bytes of host memory, more than "
                              "--max-host-bytes ({2})",
                              ::engineMode ? "--engine"
                                           : "the engine (it runs FP8 "
                                             "destinations)",
                              allHostBytes, maxHostBytes.getValue())
                    .str());
  // The lowered plan, for --engine: the module's own lowering, run by the
  // execution engine's loops (the code the MPI backend runs).
  OwningOpRef<ModuleOp> loweredCopy;
  if (engineMode) {
    if (*stage == Stage::Explicit)
      return fail(llvm::Twine(::engineMode ? "--engine"
                                           : "quantized destinations run "
                                             "with the engine, which") +
                  " lowers the plan, and the explicit reference form "
                  "(reshard.pieces) does not lower; give the planned module");
    loweredCopy = module->clone();
    if (failed(lowerModule(*loweredCopy, "")))
      return 1;
  }
  // One tensor by its pieces, or (with --engine) every tensor at once.
  auto execute = [&](std::vector<ShardBuffers> &src,
                     std::vector<ShardBuffers> &dst, size_t only,
                     const PieceTable *table) -> llvm::Error {
    if (!engineMode)
      return executePieces(layouts[only], *table, src[only], dst[only]);
    return executeRuntimePlan(*loweredCopy->getOps<rt::PlanOp>().begin(), src,
                              dst);
  };

  // --check runs both patterns unless one is named: the index as issue
  // readers expect it, the hash for elements moved by 2^8 or 2^16 places.
  std::vector<CheckPattern> patterns = {patternOption};
  if (checkMode && !patternOption.getNumOccurrences())
    patterns = {CheckPattern::Index, CheckPattern::Hash};
  int64_t tensors = 0, pieces = 0, elements = 0, badTensors = 0;
  size_t n = layouts.size();
  // Quantized destinations: a payload's source holds the pattern at its
  // own precision; payload and scales are checked against the reference
  // quantization (QuantCheck.h), which the piece interpreter also starts
  // from (it moves bytes, it does not quantize).
  std::vector<int64_t> payloadOf(n, -1); // the payload a tensor belongs to
  std::vector<bool> isScales(n, false);
  // A payload quantized on its receivers moves at full precision (its
  // layout) but lands as FP8 (its landing): the piece interpreter checks
  // what moved, the engine and --verify what landed.
  std::vector<bool> onReceiver(n, false);
  std::vector<TensorLayout> landings(layouts);
  llvm::StringMap<size_t> indexOf;
  for (size_t t = 0; t < n; ++t)
    indexOf[ops[t].getSymName()] = t;
  for (size_t t = 0; t < n; ++t) {
    if (ops[t]->hasAttr(kQuantizeOnAttr))
      payloadOf[t] = t;
    if (isQuantizedOnReceiver(ops[t])) {
      onReceiver[t] = true;
      landings[t].elementBytes = 1;
    }
    if (auto of = ops[t]->getAttrOfType<FlatSymbolRefAttr>(kScalesOfAttr)) {
      payloadOf[t] = indexOf.lookup(of.getValue());
      isScales[t] = true;
    }
  }
  std::map<std::pair<int64_t, int>, QuantCheckTensor> quantChecks;
  auto quantCheck = [&](size_t t, CheckPattern pattern) -> QuantCheckTensor & {
    int64_t p = payloadOf[t];
    auto [it, inserted] = quantChecks.try_emplace({p, int(pattern)});
    if (inserted) {
      RedistributeOp op = ops[p];
      it->second =
          makeQuantCheck(layouts[p].shape,
                         getDtypeName(op.getSrcTensorType().getElementType()),
                         layouts[p].dst.sharding.quant, pattern);
    }
    return it->second;
  };
  // The source buffers the check starts from: the caller's (engine) or
  // the quantized ones (piece interpreter).
  auto checkSources = [&](size_t t, CheckPattern pattern,
                          bool callers) -> ShardBuffers {
    const TensorLayout &l = layouts[t];
    if (payloadOf[t] < 0)
      return makeCheckBuffers(l, /*source=*/true, pattern);
    QuantCheckTensor &q = quantCheck(t, pattern);
    if (callers || onReceiver[t])
      return isScales[t]
                 ? ShardBuffers()
                 : shardsOfGlobal(l.shape, l.src, q.inputBytes, q.sourceBytes);
    return shardsOfGlobal(l.shape, l.src, l.elementBytes,
                          isScales[t] ? q.scaleBytes : q.payloadBytes);
  };
  // Per tensor with the piece interpreter; all at once with the engine.
  std::vector<ShardBuffers> src(n), dst(n);
  auto fill = [&](bool source, CheckPattern pattern) {
    for (size_t t = 0; t < n; ++t)
      (source ? src : dst)[t] =
          source ? checkSources(t, pattern, engineMode)
                 : makeCheckBuffers(engineMode ? landings[t] : layouts[t],
                                    false, pattern);
  };
  auto forget = [&](size_t t) {
    if (!engineMode) {
      src[t].clear();
      dst[t].clear();
    }
  };
  // The engine moves every tensor in one run per pattern: run them first.
  std::vector<std::vector<ShardBuffers>> engineResults;
  if (engineMode && checkMode)
    for (CheckPattern pattern : patterns) {
      fill(true, pattern);
      fill(false, pattern);
      if (llvm::Error err = execute(src, dst, 0, nullptr))
        return fail(llvm::toString(std::move(err)));
      engineResults.push_back(std::move(dst));
      dst.assign(n, {});
    }
  if (engineMode && files) {
    for (size_t t = 0; t < n; ++t) {
      if (callerSources[t] &&
          !readShards(*callerSources[t], srcDir, /*source=*/true, src[t]))
        return 1;
      for (auto &[rank, shape] : landings[t].localShapes(/*source=*/false))
        dst[t][rank].assign(landings[t].shardBytes(shape), 0);
    }
    if (llvm::Error err = execute(src, dst, 0, nullptr))
      return fail(llvm::toString(std::move(err)));
  }
  for (size_t t = 0; t < n; ++t) {
    const TensorLayout *layout = &layouts[t];
    // What the checks compare: what moved (pieces), or what landed.
    const TensorLayout &checked =
        engineMode || !verifyDir.empty() ? landings[t] : layouts[t];
    ++tensors;
    PieceTable table = tableOf(t, ops[t]);
    pieces += table.size();
    if (!makeSourcesDir.empty()) {
      if (!writeShards(layout->name, makeSourcesDir,
                       checkSources(t, patternOption, /*callers=*/true)))
        return 1;
      continue;
    }
    if (!checkMode && verifyDir.empty()) {
      if (!engineMode) {
        if (!readShards(*layout, srcDir, /*source=*/true, src[t]))
          return 1;
        for (auto &[rank, shape] : layout->localShapes(/*source=*/false))
          dst[t][rank].assign(layout->shardBytes(shape), 0);
        if (llvm::Error err = execute(src, dst, t, &table))
          return fail(llvm::toString(std::move(err)));
      }
      if (!writeShards(layout->name, dstDir, dst[t]))
        return 1;
      forget(t);
      continue;
    }
    if (!verifyDir.empty() &&
        !readShards(checked, verifyDir, /*source=*/false, dst[t]))
      return 1;
    bool wrong = false;
    for (auto [k, pattern] : llvm::enumerate(patterns)) {
      if (checkMode && engineMode) {
        dst[t] = std::move(engineResults[k][t]);
      } else if (checkMode) {
        src[t] = checkSources(t, pattern, engineMode);
        dst[t] = makeCheckBuffers(checked, /*source=*/false, pattern);
        if (llvm::Error err = execute(src, dst, t, &table))
          return fail(llvm::toString(std::move(err)));
      }
      std::vector<Mismatch> reported;
      int64_t bad;
      if (payloadOf[t] >= 0) {
        QuantCheckTensor &q = quantCheck(t, pattern);
        // Pieces move a receiver-quantized payload at full precision.
        bool moved = onReceiver[t] && checked.elementBytes != 1;
        ShardBuffers want =
            shardsOfGlobal(layout->shape, layout->dst, checked.elementBytes,
                           moved         ? q.sourceBytes
                           : isScales[t] ? q.scaleBytes
                                         : q.payloadBytes);
        bad = compareShards(checked, want, dst[t], reported, maxMismatches);
      } else {
        bad =
            checkDestination(*layout, dst[t], reported, maxMismatches, pattern);
      }
      if (!bad)
        continue;
      wrong = true;
      llvm::errs() << llvm::formatv(
          "MISMATCH tensor '{0}': {1} destination "
          "elements wrong (pattern {2})\n",
          layout->name, bad, pattern == CheckPattern::Index ? "index" : "hash");
      for (const Mismatch &m : reported)
        llvm::errs() << llvm::formatv(
            "  tensor '{0}' rank {1} local element {2} (global index {3}): "
            "expected {4:x}, got {5:x}\n",
            layout->name, m.rank, m.localLinearIndex, fmtShape(m.globalIndex),
            m.expected, m.actual);
      break;
    }
    for (auto &[rank, bytes] : dst[t])
      elements += bytes.size() / checked.elementBytes;
    badTensors += wrong;
    forget(t);
  }
  if (!makeSourcesDir.empty()) {
    llvm::outs() << llvm::formatv("wrote the source shards of {0} tensors to "
                                  "{1}\n",
                                  tensors, makeSourcesDir);
    return 0;
  }
  if (checkMode || !verifyDir.empty()) {
    llvm::outs() << llvm::formatv(
        "checked {0} tensors, {1} pieces, {2} destination elements: {3}\n",
        tensors, pieces, elements,
        badTensors ? llvm::formatv("{0} tensors WRONG", badTensors).str()
                   : std::string("all correct"));
    return badTensors ? 1 : 0;
  }
  llvm::outs() << llvm::formatv("ran {0} tensors, {1} pieces; wrote {2}\n",
                                tensors, pieces, dstDir);
  return 0;
}
