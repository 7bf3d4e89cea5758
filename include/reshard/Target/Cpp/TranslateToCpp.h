//===- TranslateToCpp.h - reshard_rt plans to C++ ---------------*- C++ -*-===//
#ifndef RESHARD_TARGET_CPP_TRANSLATETOCPP_H
#define RESHARD_TARGET_CPP_TRANSLATETOCPP_H

#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>

namespace reshard {

enum class CppBackend { Mpi, Nccl };

/// Writes the C++ translation unit (or, with `header`, the C header) of
/// `plan` for `backend`: constant per-rank tables and the extern "C" entry
/// points over the execution engine in include/reshard/ExecutionEngine.
mlir::LogicalResult translatePlanToCpp(rt::PlanOp plan, CppBackend backend,
                                       bool header, llvm::raw_ostream &os);

/// The one reshard_rt.plan of a lowered module in `sourceMgr` (parsed into
/// `module`, verified); fails with advice naming `translation` for a layout
/// JSON, a module not lowered yet, or a module without exactly one plan.
mlir::FailureOr<rt::PlanOp>
parseLoweredPlan(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                 mlir::MLIRContext *ctx, llvm::StringRef translation,
                 mlir::OwningOpRef<mlir::ModuleOp> &module);

/// Registers `--reshard-to-cpp` (options `--backend=mpi|nccl`,
/// `--reshard-cpp-emit=source|header`). The input must be a lowered plan:
/// one reshard_rt.plan and nothing else.
void registerTranslateToCpp();

} // namespace reshard

#endif // RESHARD_TARGET_CPP_TRANSLATETOCPP_H
