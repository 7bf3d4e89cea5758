//===- Passes.h - Passes over the reshard dialect ---------------*- C++ -*-===//
#ifndef RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_H
#define RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_H

#include "reshard/Dialect/Reshard/IR/ReshardOps.h"
#include "reshard/Plan/CostModel.h"
#include "reshard/Plan/SourceSelection.h"
#include "reshard/Plan/Transits.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <functional>
#include <string>

namespace reshard {

#define GEN_PASS_DECL
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"

/// A reshard-report that writes to `os` (which must outlive the pass and
/// its clones) instead of its `output` option.
std::unique_ptr<mlir::Pass>
createReshardReportPass(const ReshardReportOptions &options,
                        llvm::raw_ostream &os);

/// What reshard-report does, in two parts: reads the planned module's plan
/// now (failing with a diagnostic, as the pass does); the returned work
/// checks the schedule and builds the report's text from that copy alone,
/// touching no op, so it may run on another thread while the module is
/// lowered. `passName` names the caller in the diagnostics.
mlir::FailureOr<std::function<mlir::FailureOr<std::string>()>>
prepareReport(mlir::ModuleOp module, llvm::StringRef passName,
              ReportFormat format, bool perRank);

/// Whether `pass` is a reshard-report that writes to standard output.
bool isReportToStdout(const mlir::Pass &pass);

#define GEN_PASS_REGISTRATION
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"

} // namespace reshard

#endif // RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_H
