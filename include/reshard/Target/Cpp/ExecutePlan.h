//===- ExecutePlan.h - Run a reshard_rt plan in one process -----*- C++ -*-===//
//
// Every rank's program of a lowered plan, run in one process with the host
// loops of include/reshard/Runtime/Runtime.h (the same code the generated
// MPI backend runs), messages passed in memory step by step. This is how
// the suite checks the lowering and the runtime loops without MPI.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_TARGET_CPP_EXECUTEPLAN_H
#define RESHARD_TARGET_CPP_EXECUTEPLAN_H

#include "reshard/Dialect/Runtime/IR/Runtime.h"
#include "reshard/Plan/Interpreter.h"

namespace reshard {

/// `src[t]` / `dst[t]` hold tensor t's shards by rank (at the sizes the
/// plan states). Returns an error message, or "".
std::string executeRuntimePlan(rt::PlanOp plan, std::vector<ShardBuffers> &src,
                               std::vector<ShardBuffers> &dst);

} // namespace reshard

#endif // RESHARD_TARGET_CPP_EXECUTEPLAN_H
