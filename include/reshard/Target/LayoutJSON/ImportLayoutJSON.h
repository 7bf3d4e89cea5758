//===- ImportLayoutJSON.h - Layout JSON to the dialect ----------*- C++ -*-===//
#ifndef RESHARD_TARGET_LAYOUTJSON_IMPORTLAYOUTJSON_H
#define RESHARD_TARGET_LAYOUTJSON_IMPORTLAYOUTJSON_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <memory>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace reshard {

/// Builds a module of reshard.mesh / reshard.topology / reshard.redistribute
/// ops from the interchange JSON in the main buffer of `sourceMgr`. Every
/// problem is reported at its line and column with its JSON path (e.g.
/// `tensors[3].src.dims[1]`); returns null after reporting. Unknown keys are
/// ignored so that richer producers can annotate.
mlir::OwningOpRef<mlir::ModuleOp> importLayoutJSON(llvm::SourceMgr &sourceMgr,
                                                   mlir::MLIRContext *context);

/// The main buffer of `sourceMgr` as a module: imported when it is the
/// layout JSON (reshard::isLayoutJSON), else parsed as MLIR after the nesting
/// check of reshard/Support/InputFiles.h. Null after reporting an error.
mlir::OwningOpRef<mlir::ModuleOp>
parseLayoutOrMLIR(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                  mlir::MLIRContext *context);

/// Registers `--import-layout-json` with mlir-translate style tools.
void registerImportLayoutJSONTranslation();

} // namespace reshard

#endif // RESHARD_TARGET_LAYOUTJSON_IMPORTLAYOUTJSON_H
