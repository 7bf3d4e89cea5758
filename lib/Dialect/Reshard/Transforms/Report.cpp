//===- Report.cpp - The reshard-report pass -------------------------------===//
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Plan/CostModel.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"

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
    FailureOr<PlanModule> plan =
        PlanModule::load(getOperation(), getArgument());
    if (failed(plan))
      return signalPassFailure();
    // One model of the links for the whole plan: tensors must agree.
    for (auto [op, pt] : llvm::zip(plan->ops, plan->tensors)) {
      const PlannedTensor &first = plan->tensors.front();
      bool same = pt.topology.has_value() == first.topology.has_value() &&
                  (!pt.topology ||
                   (pt.topology->gpusPerNode == first.topology->gpusPerNode &&
                    pt.topology->nvlDomainSize == first.topology->nvlDomainSize &&
                    pt.topology->nicGBps == first.topology->nicGBps &&
                    pt.topology->nvlinkGBps == first.topology->nvlinkGBps &&
                    pt.topology->nicLatencyUs == first.topology->nicLatencyUs &&
                    pt.topology->nvlinkLatencyUs ==
                        first.topology->nvlinkLatencyUs));
      if (!same) {
        op.emitError() << "reshard-report: this tensor's topology differs "
                          "from that of the first tensor; the report models "
                          "one topology for the whole plan";
        return signalPassFailure();
      }
    }
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(output, &error);
    if (!file) {
      emitError(getOperation().getLoc()) << "reshard-report: " << error;
      return signalPassFailure();
    }
    printReport(buildReport(plan->tensors), format == "json", perRank,
                file->os());
    file->keep();
    markAllAnalysesPreserved();
  }
};
} // namespace
