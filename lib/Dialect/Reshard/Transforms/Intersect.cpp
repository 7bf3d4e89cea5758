//===- Intersect.cpp - The reshard-intersect pass -------------------------===//
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Plan/Intersection.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Threading.h"

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
    FailureOr<llvm::StringMap<PiecesOp>> planned = collectPieces(module);
    if (failed(planned))
      return signalPassFailure();

    SymbolTableCollection symbols;
    SmallVector<RedistributeOp> ops;
    std::vector<TensorLayout> layouts;
    for (RedistributeOp op : module.getOps<RedistributeOp>()) {
      if (planned->contains(op.getSymName()))
        continue;
      FailureOr<TensorLayout> layout = getTensorLayout(op, symbols);
      if (failed(layout))
        return signalPassFailure();
      ops.push_back(op);
      layouts.push_back(std::move(*layout));
    }

    // Planning is plain C++ on independent tensors: run it in parallel, then
    // build the ops in order so the output does not depend on threads.
    std::vector<PieceTable> tables(layouts.size());
    parallelFor(&getContext(), 0, layouts.size(),
                [&](size_t i) { tables[i] = computePieces(layouts[i]); });
    OpBuilder builder(&getContext());
    for (auto [op, table] : llvm::zip(ops, tables)) {
      builder.setInsertionPointAfter(op);
      PiecesOp::create(builder, op.getLoc(), op.getSymName(), table);
    }
  }
};
} // namespace
