//===- RuntimeInterpreter.h - Run reshard_rt in one process -----*- C++ -*-===//
//
// Every rank's program of a lowered plan, run in one process with the host
// loops of the execution engine (include/reshard/ExecutionEngine/Engine.h,
// the code the generated MPI backend runs), messages passed in memory step
// by step. This is how the suite checks the lowering and the engine's loops
// without MPI.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_REFERENCE_RUNTIMEINTERPRETER_H
#define RESHARD_REFERENCE_RUNTIMEINTERPRETER_H

#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"
#include "reshard/Reference/ShardBuffers.h"

#include "llvm/Support/Error.h"

namespace reshard {

/// How messages travel between the ranks.
struct MessageCut {
  /// 0: each message whole, staged; else the MPI backend's parts
  /// (ExecutionEngine/Parts.h): segments of at least `directMin` bytes
  /// travel on their own, in place where contiguous, at most `maxPart`
  /// bytes a part.
  int64_t directMin = 0;
  int64_t maxPart = int64_t(1) << 30;
};

/// `src[t]` / `dst[t]` hold tensor t's shards by rank (at the sizes the
/// plan states).
llvm::Error executeRuntimePlan(rt::PlanOp plan, std::vector<ShardBuffers> &src,
                               std::vector<ShardBuffers> &dst,
                               MessageCut cut = {});

} // namespace reshard

#endif // RESHARD_REFERENCE_RUNTIMEINTERPRETER_H
