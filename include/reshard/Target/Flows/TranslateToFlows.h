//===- TranslateToFlows.h - reshard_rt plans as flow lists ------*- C++ -*-===//
//
// A lowered plan as the messages the execution engine sends, one
// `STEP SRC DST BYTES` line each (a rank's local copies as one line with
// SRC = DST in step 0): what bench/simgrid/refit_sim replays.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_TARGET_FLOWS_TRANSLATETOFLOWS_H
#define RESHARD_TARGET_FLOWS_TRANSLATETOFLOWS_H

#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"

#include "llvm/Support/raw_ostream.h"

namespace reshard {

mlir::LogicalResult translatePlanToFlows(rt::PlanOp plan,
                                         llvm::raw_ostream &os);

/// Registers `--reshard-to-flows`.
void registerTranslateToFlows();

} // namespace reshard

#endif // RESHARD_TARGET_FLOWS_TRANSLATETOFLOWS_H
