//===- FuzzContext.h - The MLIR context the fuzz targets share -*- C++ -*-===//
#ifndef RESHARD_TEST_FUZZ_FUZZCONTEXT_H
#define RESHARD_TEST_FUZZ_FUZZCONTEXT_H

#include "reshard/InitAll.h"

#include "mlir/IR/MLIRContext.h"

#include <memory>

/// A context with the reshard dialects, renewed now and then: uniqued
/// attributes and types of every input would otherwise pile up over a
/// million runs. Nothing an input sees depends on what earlier inputs left.
inline mlir::MLIRContext &fuzzContext() {
  static std::unique_ptr<mlir::MLIRContext> ctx;
  static unsigned uses = 0;
  if (!ctx || ++uses % 10000 == 0) {
    mlir::DialectRegistry registry;
    reshard::registerAllDialects(registry);
    ctx = std::make_unique<mlir::MLIRContext>(
        registry, mlir::MLIRContext::Threading::DISABLED);
    ctx->loadAllAvailableDialects();
    ctx->printOpOnDiagnostic(false);
    ctx->printStackTraceOnDiagnostic(false);
  }
  return *ctx;
}

#endif // RESHARD_TEST_FUZZ_FUZZCONTEXT_H
