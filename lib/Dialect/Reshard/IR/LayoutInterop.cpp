//===- LayoutInterop.cpp - From the dialect's ops to plain layout data ----===//
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"

using namespace mlir;
using namespace reshard;

LogicalResult reshard::emitLayoutErrors(Operation *op, llvm::Error err) {
  bool ok = true;
  forEachLayoutError(std::move(err), [&](const LayoutError &e) {
    op->emitOpError() << e.getPath() << ": " << e.getMessage();
    ok = false;
  });
  return success(ok);
}

FailureOr<TensorLayout>
reshard::getTensorLayout(RedistributeOp op, SymbolTableCollection &symbols) {
  TensorLayout layout;
  layout.name = op.getSymName().str();
  RankedTensorType type = op.getSrcTensorType();
  layout.shape.assign(type.getShape().begin(), type.getShape().end());
  std::optional<int64_t> bytes = getElementTypeBytes(type.getElementType());
  if (!bytes)
    return op.emitOpError("has an element type that cannot be moved");
  layout.elementBytes = *bytes;
  // The layout model plans plain moves; a quantized destination is
  // verified (the redistribution's verifier) but not planned yet.
  if (op.getDstSharding().isQuantized())
    return op.emitOpError()
           << "@" << op.getSymName() << ": its destination is quantized ("
           << op.getDstSharding().toSpec().quant.str()
           << "); planning and running quantized destinations is not "
              "implemented yet, only their import and verification";
  auto side = [&](FlatSymbolRefAttr ref, ShardingAttr sharding,
                  SideLayout &out) -> LogicalResult {
    auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(op, ref.getAttr());
    if (!mesh)
      return op.emitOpError() << "mesh " << ref << " is not defined";
    out.mesh = mesh.toSpec();
    llvm::Expected<Sharding> resolved =
        resolveSharding(sharding.toSpec(), out.mesh.axes, layout.shape, "");
    if (!resolved)
      return emitLayoutErrors(op, resolved.takeError());
    out.sharding = std::move(*resolved);
    return success();
  };
  if (failed(side(op.getSrcMeshAttr(), op.getSrcSharding(), layout.src)) ||
      failed(side(op.getDstMeshAttr(), op.getDstSharding(), layout.dst)))
    return failure();
  return layout;
}

FailureOr<llvm::StringMap<PiecesOp>> reshard::collectPieces(ModuleOp module) {
  llvm::StringMap<PiecesOp> pieces;
  for (PiecesOp op : module.getOps<PiecesOp>()) {
    auto [it, inserted] = pieces.try_emplace(op.getTensor(), op);
    if (!inserted) {
      InFlightDiagnostic diag = op.emitOpError()
                                << "is a second piece table for tensor @"
                                << op.getTensor() << "; a tensor has one";
      diag.attachNote(it->second.getLoc()) << "first table here";
      return failure();
    }
  }
  return pieces;
}
