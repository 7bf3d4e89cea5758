//===- InitAll.h - Register every reshard dialect, pass and translation ---===//
#ifndef RESHARD_INITALL_H
#define RESHARD_INITALL_H

#include "reshard/Conversion/Passes.h"
#include "reshard/Dialect/Reshard/IR/ReshardOps.h"
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"
#include "reshard/Pipelines/ReshardPlanPipeline.h"
#include "reshard/Target/Cpp/TranslateToCpp.h"
#include "reshard/Target/Flows/TranslateToFlows.h"
#include "reshard/Target/LayoutJSON/ImportLayoutJSON.h"

#include "mlir/IR/DialectRegistry.h"

namespace reshard {

inline void registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<ReshardDialect, rt::RuntimeDialect>();
}

/// Every pass and the pipeline.
inline void registerAllPasses() {
  registerReshardPasses();
  registerConversionPasses();
  registerReshardPlanPipeline();
}

inline void registerAllTranslations() {
  static bool once = [] {
    registerImportLayoutJSONTranslation();
    registerTranslateToCpp();
    registerTranslateToFlows();
    return true;
  }();
  (void)once;
}

} // namespace reshard

#endif // RESHARD_INITALL_H
