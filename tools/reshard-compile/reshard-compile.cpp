//===- reshard-compile.cpp - Layout to plan C++ in one command ------------===//
//
//   reshard-compile LAYOUT --backend=mpi|nccl -o PLAN.cpp
//       [--header=PLAN.h] [--mlir=PLAN.mlir] [--report=REPORT.json]
//       [--emit=cpp|mlir|none] [--staging-budget=BYTES]
//       [--max-ops-per-step=K] [--strategy=balanced|direct]
//       [--transits=auto|always|never] [--receives-ahead]
//       [--plan-name=NAME] [--verify-each] [--timing]
//
// The stages are library calls (reshard/Compile/Compile.h); the pass
// sequence is reshard-plan-pipeline's.
//
//===----------------------------------------------------------------------===//
#include "reshard/Compile/Compile.h"
#include "reshard/Layout/Layout.h"
#include "reshard/Plan/CostModel.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <set>

#include <unistd.h>

using namespace mlir;
using namespace reshard;
namespace cl = llvm::cl;

namespace {
enum class Emit { Cpp, Mlir, None };
enum class Backend { None, Mpi, Nccl };

cl::OptionCategory category("reshard-compile options");

cl::opt<std::string> input(cl::Positional, cl::Required,
                           cl::desc("<LAYOUT: layout .json (or text starting "
                                    "with '{') or .mlir at any stage>"),
                           cl::cat(category));
cl::opt<Backend>
    backend("backend", cl::desc("Code generator; required when C++ is emitted"),
            cl::values(clEnumValN(Backend::Mpi, "mpi", "MPI on host memory"),
                       clEnumValN(Backend::Nccl, "nccl", "NCCL and CUDA")),
            cl::init(Backend::None), cl::cat(category));
cl::opt<std::string>
    output("o", cl::desc("Main output ('-' or absent: standard output)"),
           cl::value_desc("FILE"), cl::init("-"), cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("What -o receives"),
    cl::values(clEnumValN(Emit::Cpp, "cpp", "the plan's C++ (default)"),
               clEnumValN(Emit::Mlir, "mlir", "the lowered reshard_rt program"),
               clEnumValN(Emit::None, "none", "nothing")),
    cl::init(Emit::Cpp), cl::cat(category));
cl::opt<bool> timing(
    "timing",
    cl::desc("Print the wall time of every stage and pass to standard error"),
    cl::cat(category));
cl::opt<std::string> headerFile("header",
                                cl::desc("Also write the plan's C header"),
                                cl::value_desc("FILE"), cl::cat(category));
cl::opt<std::string>
    mlirFile("mlir", cl::desc("Also write the lowered reshard_rt program"),
             cl::value_desc("FILE"), cl::cat(category));
cl::opt<std::string> reportFile(
    "report",
    cl::desc("Also write the plan's JSON report ('-': standard output, which "
             "then holds the report alone)"),
    cl::value_desc("FILE"), cl::cat(category));
cl::opt<std::string> stagingBudget(
    "staging-budget",
    cl::desc("Staging bytes a rank holds at any instant (a step's "
             "messages and the next step's receives): an integer, or with "
             "a binary suffix K, M or G, either case (default 1G)"),
    cl::value_desc("BYTES"), cl::cat(category));
cl::opt<int64_t> maxOpsPerStep(
    "max-ops-per-step",
    cl::desc("Point-to-point operations per rank and step (default 1024)"),
    cl::value_desc("K"), cl::init(1024), cl::cat(category));
cl::opt<SourceStrategy> strategy("strategy", cl::desc("Source selection"),
                                 sourceStrategyValues(),
                                 cl::init(SourceStrategy::Balanced),
                                 cl::cat(category));
cl::opt<TransitMode> transits(
    "transits",
    cl::desc("Holder streams that enter or leave an NVLink domain through "
             "another of its GPUs"),
    transitModeValues(), cl::init(TransitMode::Auto), cl::cat(category));
cl::opt<bool> receivesAhead(
    "receives-ahead",
    cl::desc("The MPI backend posts each step's next receives while the step "
             "is in flight; the staging budget counts them (more steps at "
             "one budget)"),
    cl::init(false), cl::cat(category));
cl::opt<RelayTree>
    relayTree("relay-tree",
              cl::desc("Whether a domain may get a piece from another domain's "
                       "entries instead of its holders"),
              relayTreeValues(), cl::init(RelayTree::Auto), cl::cat(category));
cl::opt<int64_t> relayTreeMaxStreams(
    "relay-tree-max-streams",
    cl::desc("With --relay-tree=auto, the most streams a plan with a relay "
             "tree may have (default 270000)"),
    cl::init(kRelayTreeMaxStreams), cl::cat(category));
cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the module after every pass, not only the input and the "
             "lowered plan"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> planName(
    "plan-name",
    cl::desc("Prefix of the C entry points (<NAME>_run, ...): a C "
             "identifier; default: the module's name, else reshard_plan"),
    cl::value_desc("NAME"), cl::cat(category));

int fail(const Twine &msg) {
  llvm::errs() << "reshard-compile: error: " << msg << "\n";
  return 1;
}

/// BYTES: digits with an optional binary suffix K, M or G (either case).
std::optional<int64_t> parseBytes(StringRef text) {
  StringRef digits = text;
  unsigned shift = 0;
  if (digits.consume_back("K") || digits.consume_back("k"))
    shift = 10;
  else if (digits.consume_back("M") || digits.consume_back("m"))
    shift = 20;
  else if (digits.consume_back("G") || digits.consume_back("g"))
    shift = 30;
  uint64_t value;
  if (digits.empty() || !llvm::all_of(digits, llvm::isDigit) ||
      digits.getAsInteger(10, value) || value > (uint64_t(INT64_MAX) >> shift))
    return std::nullopt;
  return static_cast<int64_t>(value << shift);
}

/// What an output path names, to find two outputs in one file however they
/// are spelled (x, ./x, a link to x, /dev/stdout and -): the file's identity
/// when it is a regular file or a pipe (standard output's for -), else its
/// directory's identity and its name when it does not exist yet (through
/// links that point at nothing yet); a device such as /dev/null names
/// nothing (several outputs may go there).
std::optional<std::string> outputIdentity(StringRef path, int links = 0) {
  namespace fs = llvm::sys::fs;
  auto name = [](const fs::file_status &st) {
    fs::UniqueID id = st.getUniqueID();
    return std::to_string(id.getDevice()) + ":" + std::to_string(id.getFile());
  };
  auto identity = [&](const fs::file_status &st) -> std::optional<std::string> {
    if (st.type() != fs::file_type::regular_file &&
        st.type() != fs::file_type::fifo_file)
      return std::nullopt;
    return name(st);
  };
  fs::file_status st;
  if (path == "-")
    return fs::status(1, st) ? std::nullopt : identity(st);
  if (!fs::status(path, st))
    return identity(st);
  if (!fs::status(path, st, /*follow=*/false) &&
      st.type() == fs::file_type::symlink_file) {
    // A link to a file not yet made: where opening it would create it.
    char target[4096];
    ssize_t n = ::readlink(path.str().c_str(), target, sizeof(target) - 1);
    if (n <= 0 || links >= 40)
      return std::nullopt; // opening it will say what is wrong
    SmallString<256> next(StringRef(target, n));
    if (llvm::sys::path::is_relative(next)) {
      next = llvm::sys::path::parent_path(path);
      llvm::sys::path::append(next, StringRef(target, n));
    }
    return outputIdentity(next, links + 1);
  }
  StringRef dir = llvm::sys::path::parent_path(path);
  if (fs::status(dir.empty() ? "." : dir, st) ||
      st.type() != fs::file_type::directory_file)
    return std::nullopt; // opening it will say what is wrong
  return name(st) + "/" + llvm::sys::path::filename(path).str();
}

/// The outputs, opened before anything runs and kept only on success.
struct Outputs {
  std::vector<std::unique_ptr<llvm::ToolOutputFile>> files;
  llvm::raw_ostream *open(StringRef path) {
    std::string error;
    files.push_back(openOutputFile(path, &error));
    if (!files.back()) {
      fail(error);
      return nullptr;
    }
    return &files.back()->os();
  }
  void keep() {
    for (auto &f : files)
      f->keep();
  }
};

int compile() {
  bool planningOptions =
      stagingBudget.getNumOccurrences() || maxOpsPerStep.getNumOccurrences() ||
      strategy.getNumOccurrences() || transits.getNumOccurrences() ||
      relayTree.getNumOccurrences() ||
      relayTreeMaxStreams.getNumOccurrences() ||
      receivesAhead.getNumOccurrences();
  ReshardPlanOptions options;
  if (stagingBudget.getNumOccurrences()) {
    std::optional<int64_t> bytes = parseBytes(stagingBudget);
    if (!bytes)
      return fail("--staging-budget='" + stagingBudget +
                  "' is not a byte count (an integer, or with a suffix K, M "
                  "or G, below 2^63)");
    if (*bytes < kMinStagingBudget)
      return fail("--staging-budget=" + stagingBudget +
                  ": the staging budget must hold one element of up to 8 "
                  "bytes; give at least " +
                  std::to_string(kMinStagingBudget));
    options.stagingBudget = *bytes;
  }
  // Option errors name the option, not the layout's first line.
  if (relayTreeMaxStreams < 0)
    return fail("--relay-tree-max-streams=" +
                std::to_string(relayTreeMaxStreams) + ": must be at least 0");
  if (maxOpsPerStep < 2)
    return fail("--max-ops-per-step=" + std::to_string(maxOpsPerStep) +
                ": a step needs room for at least 2 operations (a send and a "
                "receive)");
  if (StringRef why = refusedStrategy(strategy); !why.empty())
    return fail("--" + why.str());
  options.maxOpsPerStep = maxOpsPerStep;
  options.strategy = strategy;
  options.transits = transits;
  options.relayTree = relayTree;
  options.relayTreeMaxStreams = relayTreeMaxStreams;
  options.receivesAhead = receivesAhead;

  // With --report=-, standard output holds the report alone.
  bool reportToStdout = reportFile == "-";
  Emit mainEmit = emit;
  if (reportToStdout && !output.getNumOccurrences() &&
      !emit.getNumOccurrences())
    mainEmit = Emit::None;
  if (reportToStdout && mainEmit != Emit::None && output == "-")
    return fail("--report=- puts the report on standard output, and so "
                "would -o; give -o FILE or --emit=none");
  bool emitsCpp = mainEmit == Emit::Cpp || !headerFile.empty();
  if (emitsCpp && backend == Backend::None)
    return fail("--backend=mpi or --backend=nccl is required to emit C++");
  std::set<std::string> paths;
  int toStdout = 0;
  for (const std::string *path :
       {&output, &headerFile, &mlirFile, &reportFile}) {
    if (path->empty() || (path == &output && mainEmit == Emit::None))
      continue;
    if (*path == "-" && ++toStdout > 1)
      return fail("two outputs are named '-' (standard output); give all "
                  "but one a file");
    std::optional<std::string> id = outputIdentity(*path);
    if (id && !paths.insert(*id).second)
      return fail("'" + *path +
                  "' is named for two outputs (however the "
                  "paths are spelled, one file would hold both)");
  }

  // Stages are timers of one tree, passes nested in their stage.
  DefaultTimingManager timer;
  timer.setEnabled(timing);
  TimingScope root = timer.getRootScope();
  TimingScope stageTimer = root.nest("import or parse");
  DialectRegistry registry;
  registerCompileDialects(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  // An error names its op by location (a layout's JSON line); the op in
  // generic form is noise there, unless asked for.
  llvm::cl::Option *printOp =
      llvm::cl::getRegisteredOptions().lookup("mlir-print-op-on-diagnostic");
  if (!printOp || !printOp->getNumOccurrences())
    ctx.printOpOnDiagnostic(false);
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(input, &error);
  if (!file)
    return fail(error);
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(file), SMLoc());
  SourceMgrDiagnosticHandler handler(*sourceMgr, &ctx);
  OwningOpRef<ModuleOp> module = loadInput(sourceMgr, &ctx);
  if (!module)
    return 1;
  stageTimer.stop();
  FailureOr<Stage> stage = getStage(*module);
  if (failed(stage))
    return 1;
  if (*stage == Stage::Lowered &&
      (planningOptions || planName.getNumOccurrences()))
    return fail(input + " is already lowered (a reshard_rt.plan): planning "
                        "options (--staging-budget, --max-ops-per-step, "
                        "--strategy, --transits, --relay-tree, "
                        "--relay-tree-max-streams, --receives-ahead, "
                        "--plan-name) do not apply to it");
  if (*stage == Stage::Explicit)
    return fail(input + " is the explicit reference form (reshard.pieces, "
                        "as reshard-expand writes it), which is for reading "
                        "and reshard-run; compile the layout or the planned "
                        "module (classes and groups)");
  if (*stage == Stage::Planned && planningOptions)
    return fail(input + " is already planned (it has a reshard.schedule): "
                        "--staging-budget, --max-ops-per-step, --strategy, "
                        "--transits, --relay-tree, --relay-tree-max-streams "
                        "and --receives-ahead apply to layouts and to "
                        "modules not yet scheduled");
  if (*stage == Stage::Routed &&
      (strategy.getNumOccurrences() || relayTree.getNumOccurrences() ||
       relayTreeMaxStreams.getNumOccurrences()))
    return fail(input + " is already routed (every reshard.group has its "
                        "routing): --strategy, --relay-tree and "
                        "--relay-tree-max-streams apply to layouts and to "
                        "modules not yet routed");
  if (*stage == Stage::Lowered && !reportFile.empty())
    return fail(input + " is already lowered: the report needs the planned "
                        "module; give the layout");

  Outputs outputs;
  llvm::raw_ostream *mainOS = nullptr, *headerOS = nullptr, *mlirOS = nullptr,
                    *reportOS = nullptr;
  if ((mainEmit != Emit::None && !(mainOS = outputs.open(output))) ||
      (!headerFile.empty() && !(headerOS = outputs.open(headerFile))) ||
      (!mlirFile.empty() && !(mlirOS = outputs.open(mlirFile))) ||
      (!reportFile.empty() && !(reportOS = outputs.open(reportFile))))
    return 1;

  auto setup = [&](PassManager &pm) {
    if (timing)
      pm.enableTiming(stageTimer);
    pm.enableVerifier(verifyEach);
    return applyPassManagerCLOptions(pm);
  };
  auto nextStage = [&](StringRef name) {
    stageTimer.stop();
    stageTimer = root.nest(name);
  };
  nextStage("plan");
  if (*stage != Stage::Lowered &&
      failed(planModule(*module, options, *stage, setup)))
    return 1;
  // The report is worked out beside the lowering, from its own copy of
  // the plan.
  std::future<FailureOr<std::string>> report;
  if (reportOS) {
    FailureOr<std::future<FailureOr<std::string>>> started =
        startReport(*module);
    if (failed(started))
      return 1;
    report = std::move(*started);
  }
  nextStage("lower");
  if (*stage != Stage::Lowered && failed(lowerModule(*module, planName, setup)))
    return 1;
  // The input was verified as it was read; the lowered plan is verified
  // here (its verifier runs the plan checker) whether or not each pass was.
  if (*stage != Stage::Lowered && !verifyEach) {
    nextStage("verify");
    if (failed(verify(*module)))
      return 1;
  }
  if (reportOS) {
    nextStage("report (what outlasts the lowering)");
    FailureOr<std::string> text = report.get();
    if (failed(text))
      return 1;
    *reportOS << *text;
  }
  nextStage("emit");

  CppBackend cpp =
      backend == Backend::Nccl ? CppBackend::Nccl : CppBackend::Mpi;
  if (mainOS && mainEmit == Emit::Cpp &&
      failed(emitCpp(*module, cpp, /*header=*/false, *mainOS)))
    return 1;
  if (headerOS && failed(emitCpp(*module, cpp, /*header=*/true, *headerOS)))
    return 1;
  for (llvm::raw_ostream *os :
       {mainEmit == Emit::Mlir ? mainOS : nullptr, mlirOS})
    if (os) { // as reshard-opt prints it
      module->print(*os);
      *os << "\n";
    }
  outputs.keep();
  stageTimer.stop();
  return 0;
}
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "reshard-compile: import, plan, lower and emit a redistribution plan\n\n"
      "  reshard-compile LAYOUT --backend=mpi|nccl -o PLAN.cpp\n\n"
      "LAYOUT (a file, or - for standard input) is a layout JSON (named\n"
      "*.json, or text that starts with '{') or reshard IR. A layout is\n"
      "planned with reshard-plan-pipeline's options below; a module on\n"
      "its way (reshard.class and reshard.group ops) goes through the\n"
      "passes it has not been through (reshard-select-sources unless its\n"
      "groups are routed, reshard-schedule unless it has a\n"
      "reshard.schedule) and is lowered;\n"
      "a lowered module (a reshard_rt.plan) is only emitted, and planning\n"
      "options are then an error; the explicit reference form\n"
      "(reshard.pieces, from reshard-expand) is refused. Outputs are\n"
      "written only when every stage succeeded.\n");
  return compile();
}
