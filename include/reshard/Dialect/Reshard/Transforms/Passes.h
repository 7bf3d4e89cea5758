//===- Passes.h - Passes over the reshard dialect ---------------*- C++ -*-===//
#ifndef RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_H
#define RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_H

#include "reshard/Dialect/Reshard/IR/ReshardOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace reshard {

#define GEN_PASS_DECL
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"

/// Whether a reshard-report pass of this process has written its report to
/// standard output: reshard-opt then prints the report alone there (the IR
/// only with -o FILE).
bool reportWentToStdout();

} // namespace reshard

#endif // RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_H
