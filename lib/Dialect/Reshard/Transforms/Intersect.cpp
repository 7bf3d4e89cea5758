//===- Intersect.cpp - The reshard-intersect pass -------------------------===//
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"

namespace reshard {
#define GEN_PASS_DEF_RESHARDINTERSECT
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"
} // namespace reshard

using namespace mlir;
using namespace reshard;

namespace {
struct IntersectPass
    : public reshard::impl::ReshardIntersectBase<IntersectPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (Operation &op : module.getBody()->getOperations())
      if (isa<ClassOp, GroupOp, ScheduleOp, PiecesOp>(op)) {
        op.emitOpError()
            << "is already here: reshard-intersect plans a module once, "
               "from its layout alone";
        return signalPassFailure();
      }
    if (failed(intersectModule(module)))
      signalPassFailure();
  }
};
} // namespace
