//===- Expand.cpp - The reshard-expand pass -------------------------------===//
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"
#include "reshard/Plan/Expansion.h"

#include "mlir/IR/Builders.h"

namespace reshard {
#define GEN_PASS_DEF_RESHARDEXPAND
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"
} // namespace reshard

using namespace mlir;
using namespace reshard;

namespace {
struct ExpandPass : public reshard::impl::ReshardExpandBase<ExpandPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<PlanModule> plan = PlanModule::load(module, getArgument());
    if (failed(plan))
      return signalPassFailure();
    OpBuilder b(&getContext());
    for (auto [t, op] : llvm::enumerate(plan->tensors)) {
      b.setInsertionPointAfter(op);
      PiecesOp::create(b, op.getLoc(), op.getSymName(),
                       expandPieces(plan->model, t));
    }
    for (ClassOp op : plan->classes)
      op.erase();
    for (GroupOp op : plan->groups)
      op.erase();
    if (plan->schedule)
      plan->schedule.erase();
  }
};
} // namespace
