//===- Compile.h - reshard-compile's stages as library calls ----*- C++ -*-===//
//
// Import, plan, report, lower and emit, each a function over one module, so
// that reshard-compile, reshard-run and embedders run the same stages in the
// same order (CIRCT's lib/Firtool is the model). The pass sequence itself is
// reshard-plan-pipeline's.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_COMPILE_COMPILE_H
#define RESHARD_COMPILE_COMPILE_H

#include "reshard/Pipelines/ReshardPlanPipeline.h"
#include "reshard/Target/Cpp/TranslateToCpp.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <future>
#include <memory>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace reshard {

/// How far a module has come.
enum class Stage {
  Layout,      ///< reshard ops, no classes or groups yet: to be planned
  Intersected, ///< classes and groups, some group not yet routed
  Routed,      ///< every group routed, no reshard.schedule yet
  Planned,     ///< classes, groups and a reshard.schedule
  Explicit,    ///< every redistribution has its reshard.pieces: the reference
               ///< form (reshard-expand), for reading and reshard-run only
  Lowered,     ///< one reshard_rt.plan and nothing else
};

/// Called on every pass manager a stage builds, before it runs: tools apply
/// their command line's pass manager options (timing, crash reproducers).
using PassManagerSetup =
    llvm::function_ref<mlir::LogicalResult(mlir::PassManager &)>;

/// Registers the dialects every stage needs.
void registerCompileDialects(mlir::DialectRegistry &registry);

/// The main buffer of `sourceMgr` as a verified module: the layout JSON
/// (a `.json` name or a leading `{`) imported, or MLIR at any stage parsed.
/// Null after an error, which has been reported.
mlir::OwningOpRef<mlir::ModuleOp>
loadInput(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
          mlir::MLIRContext *context);

/// The stage of `module`; fails with a diagnostic for a mixture (a plan
/// beside reshard ops, pieces beside groups, or pieces for some tensors
/// only).
mlir::FailureOr<Stage> getStage(mlir::ModuleOp module);

/// Plans a Layout, Intersected or Routed module in place with the passes of
/// reshard-plan-pipeline that remain for its `stage` (without the
/// lowering).
mlir::LogicalResult planModule(mlir::ModuleOp module,
                               const ReshardPlanOptions &options, Stage stage,
                               PassManagerSetup setup = {});

/// Starts the JSON report of a Planned module (reshard-report's): its plan
/// is read now, failing with a diagnostic; the rest is worked out from that
/// copy on another thread (unless the context is single-threaded), so that
/// the caller may lower the module meanwhile. get() waits for the text
/// (a failure has been reported).
mlir::FailureOr<std::future<mlir::FailureOr<std::string>>>
startReport(mlir::ModuleOp module);

/// Lowers a Planned module in place to a reshard_rt plan named `planName`
/// (empty: the module's name, else reshard_plan).
mlir::LogicalResult lowerModule(mlir::ModuleOp module, llvm::StringRef planName,
                                PassManagerSetup setup = {});

/// Emits the C++ source (or, with `header`, the C header) of a Lowered
/// module.
mlir::LogicalResult emitCpp(mlir::ModuleOp module, CppBackend backend,
                            bool header, llvm::raw_ostream &os);

} // namespace reshard

#endif // RESHARD_COMPILE_COMPILE_H
