//===- Report.cpp - The reshard-report pass -------------------------------===//
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"
#include "reshard/Plan/CostModel.h"

#include "reshard/Dialect/Runtime/IR/Runtime.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

#include <atomic>
#include <mutex>

namespace reshard {
#define GEN_PASS_DEF_RESHARDREPORT
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"
} // namespace reshard

using namespace mlir;
using namespace reshard;

namespace {
struct ReportPass : public reshard::impl::ReshardReportBase<ReportPass> {
  using Base::Base;
  void runOnOperation() override {
    if (format != "text" && format != "json") {
      emitError(getOperation().getLoc()) << "reshard-report: unknown format '"
                                         << format << "'; use text or json";
      return signalPassFailure();
    }
    if (json && text) {
      emitError(getOperation().getLoc())
          << "reshard-report: json and text exclude each other";
      return signalPassFailure();
    }
    bool asJson = json || (format == "json" && !text);
    ModuleOp module = getOperation();
    if (!module.getOps<rt::PlanOp>().empty()) {
      emitError(module.getLoc())
          << "reshard-report: the module holds a lowered reshard_rt.plan, "
             "which no longer has the pieces the report reads; report "
             "before convert-reshard-to-runtime";
      return signalPassFailure();
    }
    // Nothing planned yet: report the default plan, made on a copy.
    OwningOpRef<ModuleOp> planned;
    if (!module.getOps<RedistributeOp>().empty() &&
        module.getOps<PiecesOp>().empty()) {
      planned = module.clone();
      PassManager pm(module.getContext());
      pm.addPass(createReshardIntersect());
      pm.addPass(createReshardSelectSources());
      ReshardScheduleOptions schedule;
      schedule.stagingBudget = stagingBudget;
      pm.addPass(createReshardSchedule(schedule));
      if (failed(pm.run(*planned)))
        return signalPassFailure();
      module = *planned;
    }
    FailureOr<PlanModule> plan = PlanModule::load(module, getArgument());
    if (failed(plan))
      return signalPassFailure();
    // One model of the links for the whole plan: tensors must agree.
    for (auto [op, pt] : llvm::zip(plan->ops, plan->tensors)) {
      const PlannedTensor &first = plan->tensors.front();
      bool same =
          pt.topology.has_value() == first.topology.has_value() &&
          (!pt.topology ||
           (pt.topology->gpusPerNode == first.topology->gpusPerNode &&
            pt.topology->nvlDomainSize == first.topology->nvlDomainSize &&
            pt.topology->nicGBps == first.topology->nicGBps &&
            pt.topology->nvlinkGBps == first.topology->nvlinkGBps &&
            pt.topology->nicLatencyUs == first.topology->nicLatencyUs &&
            pt.topology->nvlinkLatencyUs == first.topology->nvlinkLatencyUs));
      if (!same) {
        op.emitError() << "reshard-report: this tensor's topology differs "
                          "from that of the first tensor; the report models "
                          "one topology for the whole plan";
        return signalPassFailure();
      }
    }
    // Reports of nested modules run in parallel: each is written whole,
    // one at a time.
    std::string text;
    llvm::raw_string_ostream os(text);
    printReport(buildReport(plan->tensors), asJson, perRank, os);
    std::lock_guard<std::mutex> guard(outputLock);
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(output, &error);
    if (!file) {
      emitError(getOperation().getLoc()) << "reshard-report: " << error;
      return signalPassFailure();
    }
    file->os() << text;
    file->keep();
    if (output == "-")
      wroteToStdout = true;
    markAllAnalysesPreserved();
  }

  static std::mutex outputLock;
  static std::atomic<bool> wroteToStdout;
};
std::mutex ReportPass::outputLock;
std::atomic<bool> ReportPass::wroteToStdout{false};
} // namespace

bool reshard::reportWentToStdout() { return ReportPass::wroteToStdout; }
