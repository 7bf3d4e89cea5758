//===- Passes.h - Conversions between reshard dialects ----------*- C++ -*-===//
#ifndef RESHARD_CONVERSION_PASSES_H
#define RESHARD_CONVERSION_PASSES_H

#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace reshard {

#define GEN_PASS_DECL
#include "reshard/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "reshard/Conversion/Passes.h.inc"

} // namespace reshard

#endif // RESHARD_CONVERSION_PASSES_H
