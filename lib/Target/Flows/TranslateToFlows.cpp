//===- TranslateToFlows.cpp - reshard_rt plans as flow lists --------------===//
//
// The messages come from engine::step_messages on the encoded tables, the
// code the backends run, so the simulation replays exactly what the
// generated code sends.
//
//===----------------------------------------------------------------------===//
#include "reshard/Target/Flows/TranslateToFlows.h"

#include "reshard/Dialect/Runtime/IR/PlanEncoding.h"
#include "reshard/Target/Cpp/TranslateToCpp.h"

#include "mlir/Tools/mlir-translate/Translation.h"

using namespace mlir;
using namespace reshard;

LogicalResult reshard::translatePlanToFlows(rt::PlanOp plan, raw_ostream &os) {
  std::unique_ptr<rt::EncodedPlan> encoded = rt::EncodedPlan::encode(plan);
  if (!encoded)
    return failure();
  const engine::Plan &p = encoded->view();
  os << "# flows of plan @" << plan.getSymName()
     << ": STEP SRC DST BYTES, one line per message; SRC = DST: the rank's "
        "local copies\n";
  std::vector<engine::Message> sends, recvs, ahead;
  for (int64_t i = 0; i < p.num_programs; ++i) {
    const engine::RankProgram &prog = p.programs[i];
    int64_t copied = 0;
    for (int64_t c = prog.first_copy; c < prog.first_copy + prog.num_copies;
         ++c) {
      const engine::Item &it = p.items[c];
      const engine::Group &g = p.groups[it.group];
      copied +=
          it.count * p.pieces[p.classes[g.cls].first_piece + it.piece].bytes;
    }
    if (copied)
      os << "0 " << prog.rank << " " << prog.rank << " " << copied << "\n";
    for (int64_t step = 0; step < prog.steps; ++step) {
      engine::step_messages(p, prog, step, -1, sends, recvs, ahead);
      for (const engine::Message &m : sends)
        os << step << " " << prog.rank << " " << m.peer << " " << m.bytes
           << "\n";
    }
  }
  return success();
}

void reshard::registerTranslateToFlows() {
  TranslateRegistration registration(
      "reshard-to-flows",
      "Write a lowered reshard plan's messages as STEP SRC DST BYTES lines "
      "(for bench/simgrid/refit_sim)",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         llvm::raw_ostream &os, MLIRContext *ctx) -> LogicalResult {
        OwningOpRef<ModuleOp> module;
        FailureOr<rt::PlanOp> plan =
            parseLoweredPlan(sourceMgr, ctx, "--reshard-to-flows", module);
        if (failed(plan))
          return failure();
        return translatePlanToFlows(*plan, os);
      });
}
