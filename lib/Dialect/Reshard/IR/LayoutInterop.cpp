//===- LayoutInterop.cpp - From the dialect's ops to plain layout data ----===//
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"
#include "reshard/Layout/Quant.h"

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

ShardingAttr reshard::getShardingAttr(MLIRContext *ctx,
                                      const Sharding &sharding,
                                      const MeshSpec &mesh) {
  SmallVector<DimShardingAttr> dims;
  for (const DimSharding &d : sharding.dims) {
    SmallVector<StringAttr> axes;
    for (unsigned a : d.axes)
      axes.push_back(StringAttr::get(ctx, mesh.axes[a]));
    SmallVector<int64_t> order;
    for (const OrderRun &r : d.order)
      order.append({r.start, r.length});
    dims.push_back(DimShardingAttr::get(ctx, axes, d.blocks, order));
  }
  return ShardingAttr::get(ctx, dims, sharding.dimOrder, ArrayRef<int64_t>(), 0,
                           false);
}

std::optional<std::string> reshard::getQuantScales(RedistributeOp op,
                                                   const TensorSides &sides,
                                                   bool senders,
                                                   QuantScales &out) {
  const QuantSpec &quant = sides.dst.sharding.quant;
  SmallVector<int64_t> blocks = quant.blockSizes(sides.shape.size());
  Sharding payload = sides.dst.sharding;
  payload.quant = QuantSpec();
  const Sharding &held = senders ? sides.src.sharding : payload;
  const MeshSpec &mesh = senders ? sides.src.mesh : sides.dst.mesh;
  if (std::optional<std::string> why =
          checkWholeBlocks(held, mesh.shape, mesh.axes, sides.shape, blocks))
    return why;
  // checkWholeBlocks found the holder's scale sharding.
  std::optional<Sharding> dst = scaleSharding(payload, sides.shape, blocks);
  if (!dst)
    return std::string("the destination's scales have no sharding");
  out.src = *scaleSharding(held, sides.shape, blocks);
  out.dst = std::move(*dst);
  out.startOnDst = !senders;
  SmallVector<int64_t> shape;
  for (auto [n, b] : llvm::zip(sides.shape, blocks))
    shape.push_back(llvm::divideCeilSigned(n, b));
  MLIRContext *ctx = op.getContext();
  Type element = quant.kind == QuantSpec::Mx
                     ? Type(IntegerType::get(ctx, 8, IntegerType::Unsigned))
                     : Type(Float32Type::get(ctx));
  out.type = RankedTensorType::get(shape, element);
  return std::nullopt;
}

/// The scales' redistribution `scales` against what getQuantScales makes
/// for `payload`.
static LogicalResult verifyScales(RedistributeOp payload, RedistributeOp scales,
                                  const TensorSides &sides,
                                  const QuantScales &want,
                                  SymbolTableCollection &symbols) {
  std::string of = ("the scales of @" + payload.getSymName()).str();
  if (scales.getSrcTensorType() != want.type ||
      scales.getDstTensorType() != want.type)
    return scales.emitOpError() << "moves " << scales.getSrcTensorType()
                                << " to " << scales.getDstTensorType()
                                << ", but " << of << " are " << want.type;
  FlatSymbolRefAttr srcMesh =
      want.startOnDst ? payload.getDstMeshAttr() : payload.getSrcMeshAttr();
  if (scales.getSrcMeshAttr() != srcMesh ||
      scales.getDstMeshAttr() != payload.getDstMeshAttr())
    return scales.emitOpError()
           << "goes from mesh " << scales.getSrcMeshAttr() << " to "
           << scales.getDstMeshAttr() << ", but " << of << " go from "
           << srcMesh << " to " << payload.getDstMeshAttr()
           << (want.startOnDst ? " (quantized on the receivers, they stay "
                                 "where they are made)"
                               : "");
  FailureOr<TensorSides> got = getTensorSides(scales, symbols);
  if (failed(got))
    return failure();
  MLIRContext *ctx = payload.getContext();
  const MeshSpec &startMesh = want.startOnDst ? sides.dst.mesh : sides.src.mesh;
  if (got->src.sharding != want.src)
    return scales.emitOpError()
           << "is sharded " << scales.getSrcSharding() << " on its source, but "
           << of << " are " << getShardingAttr(ctx, want.src, startMesh);
  if (got->dst.sharding != want.dst)
    return scales.emitOpError()
           << "is sharded " << scales.getDstSharding()
           << " on its destination, but " << of << " are "
           << getShardingAttr(ctx, want.dst, sides.dst.mesh);
  return success();
}

LogicalResult reshard::verifyQuantDecision(RedistributeOp op,
                                           SymbolTableCollection &symbols) {
  Operation *scope = op->getParentOp();
  Attribute onAttr = op->getAttr(kQuantizeOnAttr),
            ofAttr = op->getAttr(kScalesOfAttr);
  if (onAttr && !isa<StringAttr>(onAttr))
    return op.emitOpError() << "quantize_on must be \"sender\" or "
                               "\"receiver\", not "
                            << onAttr;
  if (ofAttr && !isa<FlatSymbolRefAttr>(ofAttr))
    return op.emitOpError()
           << "scales_of must name a tensor (@name), not " << ofAttr;
  if (auto of = dyn_cast_or_null<FlatSymbolRefAttr>(ofAttr)) {
    auto payload = dyn_cast_or_null<RedistributeOp>(
        symbols.lookupNearestSymbolFrom(scope, of.getAttr()));
    if (!payload || !payload->hasAttr(kQuantizeOnAttr))
      return op.emitOpError()
             << "scales_of = " << of
             << " names no quantized redistribution that reshard-quantize "
                "decided (with quantize_on)";
    std::string name = (of.getValue() + kScaleSuffix).str();
    if (op.getSymName() != name)
      return op.emitOpError()
             << "is named @\"" << op.getSymName() << "\", but the scales of "
             << of << " are named @\"" << name << "\"";
  }
  auto on = dyn_cast_or_null<StringAttr>(onAttr);
  if (!on)
    return success();
  if (!op.getDstSharding().isQuantized())
    return op.emitOpError() << "has quantize_on, but its destination is not "
                               "quantized";
  if (on.getValue() != kQuantizeOnSender &&
      on.getValue() != kQuantizeOnReceiver)
    return op.emitOpError() << "quantize_on = \"" << on.getValue()
                            << "\" is not a place; \"sender\" and "
                               "\"receiver\" are";
  FailureOr<TensorSides> sides = getTensorSides(op, symbols);
  if (failed(sides))
    return failure();
  bool senders = on.getValue() == kQuantizeOnSender;
  QuantScales want;
  if (std::optional<std::string> why =
          getQuantScales(op, *sides, senders, want))
    return op.emitOpError()
           << "@" << op.getSymName() << " is quantized on its "
           << (senders ? "senders" : "receivers") << ", but " << *why;
  auto name = StringAttr::get(op.getContext(), op.getSymName() + kScaleSuffix);
  auto scales = dyn_cast_or_null<RedistributeOp>(
      symbols.lookupNearestSymbolFrom(scope, name));
  if (!scales || !scales->hasAttr(kScalesOfAttr))
    return op.emitOpError()
           << "@" << op.getSymName()
           << " is quantized but has no scales: reshard-quantize adds @\""
           << name.getValue() << "\" with scales_of = @" << op.getSymName();
  return verifyScales(op, scales, *sides, want, symbols);
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
