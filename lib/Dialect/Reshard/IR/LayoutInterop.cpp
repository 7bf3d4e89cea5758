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

FailureOr<TensorSides> reshard::getTensorSides(RedistributeOp op,
                                               SymbolTableCollection &symbols) {
  TensorSides sides;
  ArrayRef<int64_t> shape = op.getSrcTensorType().getShape();
  sides.shape.assign(shape.begin(), shape.end());
  auto side = [&](FlatSymbolRefAttr ref, ShardingAttr sharding,
                  SideLayout &out) -> LogicalResult {
    auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(op, ref.getAttr());
    if (!mesh)
      return op.emitOpError() << "mesh " << ref << " is not defined";
    out.mesh = mesh.toSpec();
    llvm::Expected<Sharding> resolved =
        resolveSharding(sharding.toSpec(), out.mesh.axes, sides.shape, "");
    if (!resolved)
      return emitLayoutErrors(op, resolved.takeError());
    out.sharding = std::move(*resolved);
    return success();
  };
  if (failed(side(op.getSrcMeshAttr(), op.getSrcSharding(), sides.src)) ||
      failed(side(op.getDstMeshAttr(), op.getDstSharding(), sides.dst)))
    return failure();
  return sides;
}

static bool quantizedOn(RedistributeOp op, StringRef side) {
  auto on = op->getAttrOfType<StringAttr>(kQuantizeOnAttr);
  return on && on.getValue() == side;
}

bool reshard::isQuantizedOnSender(RedistributeOp op) {
  return quantizedOn(op, kQuantizeOnSender);
}

bool reshard::isQuantizedOnReceiver(RedistributeOp op) {
  return quantizedOn(op, kQuantizeOnReceiver);
}

FailureOr<TensorLayout>
reshard::getTensorLayout(RedistributeOp op, SymbolTableCollection &symbols) {
  TensorLayout layout;
  layout.name = op.getSymName().str();
  std::optional<int64_t> bytes =
      getElementTypeBytes(op.getSrcTensorType().getElementType());
  if (!bytes)
    return op.emitOpError("has an element type that cannot be moved");
  layout.elementBytes = *bytes;
  if (op.getDstSharding().isQuantized()) {
    auto on = op->getAttrOfType<StringAttr>(kQuantizeOnAttr);
    if (!on)
      return op.emitOpError()
             << "@" << op.getSymName() << ": its destination is quantized ("
             << op.getDstSharding().toSpec().quant.str()
             << ") but not yet decided where; run reshard-quantize first "
                "(reshard-plan-pipeline and reshard-compile do)";
    if (on.getValue() != kQuantizeOnSender &&
        on.getValue() != kQuantizeOnReceiver)
      return op.emitOpError()
             << "quantize_on = \"" << on.getValue()
             << "\" is not a place; \"sender\" and \"receiver\" are";
    // The FP8 payload is what moves when senders quantize.
    if (on.getValue() == kQuantizeOnSender)
      layout.elementBytes = 1;
  }
  FailureOr<TensorSides> sides = getTensorSides(op, symbols);
  if (failed(sides))
    return failure();
  layout.shape = std::move(sides->shape);
  layout.src = std::move(sides->src);
  layout.dst = std::move(sides->dst);
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
