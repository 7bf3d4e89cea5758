//===- Report.cpp - The reshard-report pass -------------------------------===//
//
// The report reads a planned module and writes to the stream it was given
// or to its `output` file. A pass and its clones (one per nested module run
// in parallel) share one sink, so each report is written whole.
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"
#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

#include <mutex>

namespace reshard {
#define GEN_PASS_DEF_RESHARDREPORT
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"
} // namespace reshard

using namespace mlir;
using namespace reshard;

namespace {

/// Where the reports of one pass and its clones go.
struct ReportSink {
  std::mutex lock;
  llvm::raw_ostream *stream = nullptr; // given by the creator, else a file
  std::unique_ptr<llvm::ToolOutputFile> file;
};

struct ReportPass : public reshard::impl::ReshardReportBase<ReportPass> {
  using Base::Base;
  ReportPass(const ReshardReportOptions &options, llvm::raw_ostream &os)
      : Base(options) {
    sink->stream = &os;
  }

  /// `--reshard-report=json` and `=text` name the format alone.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    StringRef trimmed = options.trim();
    if (trimmed == "json" || trimmed == "text")
      return Pass::initializeOptions(("format=" + trimmed).str(), errorHandler);
    return Pass::initializeOptions(options, errorHandler);
  }

  bool writesToStdout() const { return !sink->stream && output == "-"; }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<std::function<FailureOr<std::string>()>> work =
        prepareReport(module, getArgument(), format, perRank);
    if (failed(work))
      return signalPassFailure();
    FailureOr<std::string> text = (*work)();
    if (failed(text))
      return signalPassFailure();

    std::lock_guard<std::mutex> guard(sink->lock);
    if (!sink->stream) {
      std::string error;
      sink->file = openOutputFile(output, &error);
      if (!sink->file) {
        emitError(module.getLoc()) << "reshard-report: " << error;
        return signalPassFailure();
      }
      sink->file->keep();
      sink->stream = &sink->file->os();
    }
    *sink->stream << *text;
    sink->stream->flush();
    markAllAnalysesPreserved();
  }

  /// Shared with the clones (copies) of this pass.
  std::shared_ptr<ReportSink> sink = std::make_shared<ReportSink>();
};
} // namespace

FailureOr<std::function<FailureOr<std::string>()>>
reshard::prepareReport(ModuleOp module, StringRef passName, ReportFormat format,
                       bool perRank) {
  if (!module.getOps<rt::PlanOp>().empty()) {
    emitError(module.getLoc())
        << "reshard-report: the module holds a lowered reshard_rt.plan, "
           "which no longer has the pieces the report reads; report "
           "before convert-reshard-to-runtime";
    return failure();
  }
  if (auto pieces = module.getOps<PiecesOp>(); !pieces.empty()) {
    (*pieces.begin()).emitOpError()
        << "is the explicit reference form (reshard-expand's), which "
           "reshard-run executes; reshard-report reports the planned "
           "module (its reshard.class and reshard.group ops)";
    return failure();
  }
  if (!module.getOps<RedistributeOp>().empty() &&
      module.getOps<GroupOp>().empty()) {
    emitError(module.getLoc())
        << "reshard-report: the module is not planned yet (no "
           "reshard.group); run --reshard-plan-pipeline=lower=false (or "
           "the planning passes) before --reshard-report, or use "
           "reshard-compile --report=FILE";
    return failure();
  }
  FailureOr<PlanModule> plan = PlanModule::load(module, passName);
  if (failed(plan))
    return failure();
  // The work owns its copy of the plan and touches no op: the module may
  // be lowered meanwhile.
  auto model = std::make_shared<PlanModel>(std::move(plan->model));
  ScheduleOp schedule = plan->schedule;
  Location scheduleLoc = schedule ? schedule.getLoc() : module.getLoc();
  return std::function<FailureOr<std::string>()>(
      [=]() -> FailureOr<std::string> {
        std::vector<TransferGroup> transfers = enumerateTransfers(*model);
        std::vector<StreamContent> streams = collectStreams(*model, transfers);
        if (failed(checkScheduleMatches(*model, streams, scheduleLoc)))
          return failure();
        std::string text;
        llvm::raw_string_ostream os(text);
        printReport(buildReport(*model, transfers, streams), format, perRank,
                    os);
        return text;
      });
}

std::unique_ptr<Pass>
reshard::createReshardReportPass(const ReshardReportOptions &options,
                                 llvm::raw_ostream &os) {
  return std::make_unique<ReportPass>(options, os);
}

bool reshard::isReportToStdout(const Pass &pass) {
  if (pass.getTypeID() != TypeID::get<ReportPass>())
    return false;
  return static_cast<const ReportPass &>(pass).writesToStdout();
}
