//===- PlanModule.cpp - Load and store a module's piece tables ------------===//
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace reshard;

FailureOr<PlanModule> PlanModule::load(ModuleOp module, StringRef passName) {
  FailureOr<llvm::StringMap<PiecesOp>> tables = collectPieces(module);
  if (failed(tables))
    return failure();
  SymbolTableCollection symbols;
  PlanModule plan;
  for (RedistributeOp op : module.getOps<RedistributeOp>()) {
    PiecesOp pieces = tables->lookup(op.getSymName());
    if (!pieces)
      return op.emitOpError()
             << "has no reshard.pieces table; plan the module first "
                "(--reshard-plan-pipeline=lower=false, or --reshard-intersect "
                "before --"
             << passName << ")";
    FailureOr<TensorLayout> layout = getTensorLayout(op, symbols);
    if (failed(layout))
      return failure();
    PlannedTensor pt{std::move(*layout), pieces.toTable(), std::nullopt};
    if (FlatSymbolRefAttr ref = op.getTopologyAttr())
      if (auto topo =
              symbols.lookupNearestSymbolFrom<TopologyOp>(op, ref.getAttr()))
        pt.topology = topo.toSpec();
    plan.ops.push_back(op);
    plan.pieces.push_back(pieces);
    plan.tensors.push_back(std::move(pt));
  }
  return plan;
}

void PlanModule::store() {
  for (auto [op, pt] : llvm::zip(pieces, tensors))
    op.setRows(pt.table.rows);
}
