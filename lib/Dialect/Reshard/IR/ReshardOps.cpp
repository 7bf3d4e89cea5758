//===- ReshardOps.cpp - Meshes, topologies, redistributions, pieces -------===//
//
// The layout checks themselves live in reshard/Layout (shared with the
// importer); here they are fed from the IR and their findings reported at
// the op.
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Reshard/IR/ReshardOps.h"
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"
#include "reshard/Layout/Quant.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;
using namespace reshard;

#define GET_OP_CLASSES
#include "reshard/Dialect/Reshard/IR/ReshardOps.cpp.inc"

/// Symbol names are printed as @name; an empty one cannot be read back.
static LogicalResult verifySymbolName(Operation *op, StringRef name) {
  if (name.empty())
    return op->emitOpError("needs a non-empty symbol name");
  // Tensor names reach C as NUL-terminated strings.
  if (name.contains('\0'))
    return op->emitOpError("symbol name contains a NUL character; C callers "
                           "of a plan would see it cut short");
  return success();
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

MeshSpec MeshOp::toSpec() {
  MeshSpec spec;
  spec.shape.assign(getShape().begin(), getShape().end());
  spec.axes = getAxisNames();
  spec.ranks.assign(getRanks().begin(), getRanks().end());
  return spec;
}

SmallVector<std::string> MeshOp::getAxisNames() {
  SmallVector<std::string> names;
  for (Attribute axis : getAxes())
    names.push_back(cast<StringAttr>(axis).str());
  return names;
}

LogicalResult MeshOp::verify() {
  if (failed(verifySymbolName(*this, getSymName())))
    return failure();
  MeshSpec spec = toSpec();
  return emitLayoutErrors(*this, verifyMesh(spec, ""));
}

//===----------------------------------------------------------------------===//
// TopologyOp
//===----------------------------------------------------------------------===//

TopologySpec TopologyOp::toSpec() {
  TopologySpec spec;
  spec.gpusPerNode = getGpusPerNode();
  spec.nvlDomainSize = getNvlDomainSize();
  spec.nvlinkGBps = getNvlink_GBpsPerGpu().convertToDouble();
  spec.nicGBps = getNic_GBpsPerGpu().convertToDouble();
  spec.nvlinkLatencyUs = getNvlinkLatencyUs().convertToDouble();
  spec.nicLatencyUs = getNicLatencyUs().convertToDouble();
  return spec;
}

LogicalResult TopologyOp::verify() {
  if (failed(verifySymbolName(*this, getSymName())))
    return failure();
  TopologySpec spec = toSpec();
  return emitLayoutErrors(*this, verifyTopology(spec, ""));
}

//===----------------------------------------------------------------------===//
// RedistributeOp
//===----------------------------------------------------------------------===//

static std::string supportedElementTypes() {
  return "bf16, f16, f32, f64, f8E4M3FN, f8E5M2, or an 8/16/32/64-bit "
         "integer";
}

/// Checks one side's tensor type on its own: static, non-negative, movable.
static LogicalResult verifyTensorType(Operation *op, StringRef side,
                                      RankedTensorType type) {
  if (type.getEncoding())
    return op->emitOpError()
           << side << " has encoding " << type.getEncoding()
           << "; the sharding alone describes the layout, drop the encoding";
  for (auto [i, dim] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(dim))
      return op->emitOpError()
             << side << " dim " << i
             << " is dynamic; a redistribution needs a static global shape";
  std::optional<int64_t> bytes = getElementTypeBytes(type.getElementType());
  if (!bytes)
    return op->emitOpError()
           << side << " element type " << type.getElementType()
           << " cannot be redistributed; use " << supportedElementTypes();
  return emitLayoutErrors(
      op, verifyTensorShape(type.getShape(), *bytes, side.str()));
}

LogicalResult RedistributeOp::verify() {
  if (failed(verifySymbolName(*this, getSymName())))
    return failure();
  RankedTensorType src = getSrcTensorType(), dst = getDstTensorType();
  if (failed(verifyTensorType(*this, "src_type", src)) ||
      failed(verifyTensorType(*this, "dst_type", dst)))
    return failure();
  if (getSrcSharding().isQuantized())
    return emitOpError() << "the source sharding is quantized; only a "
                            "destination can be";
  if (getDstSharding().isQuantized()) {
    // The payload is FP8 E4M3; the source keeps the values' own type.
    if (!isa<Float8E4M3FNType>(dst.getElementType()))
      return emitOpError() << "destination element type "
                           << dst.getElementType()
                           << " of a quantized destination must be f8E4M3FN";
    if (!isa<BFloat16Type, Float16Type, Float32Type>(src.getElementType()))
      return emitOpError() << "source element type " << src.getElementType()
                           << " cannot be quantized; use bf16, f16 or f32";
  } else if (src.getElementType() != dst.getElementType()) {
    return emitOpError() << "source element type " << src.getElementType()
                         << " differs from destination element type "
                         << dst.getElementType()
                         << "; a redistribution moves elements unchanged "
                            "(only a quantized destination changes them)";
  }
  if (src.getShape() != dst.getShape())
    return emitOpError()
           << "source shape ["
           << llvm::join(
                  llvm::map_range(src.getShape(),
                                  [](int64_t d) { return std::to_string(d); }),
                  ", ")
           << "] differs from destination shape ["
           << llvm::join(
                  llvm::map_range(dst.getShape(),
                                  [](int64_t d) { return std::to_string(d); }),
                  ", ")
           << "]; both sides must hold the same global tensor";
  return success();
}

/// Resolves the mesh named by `ref` and checks `sharding` against it.
static LogicalResult verifySide(RedistributeOp op,
                                SymbolTableCollection &symbols, StringRef side,
                                FlatSymbolRefAttr ref, ShardingAttr sharding) {
  Operation *target = symbols.lookupNearestSymbolFrom(op, ref.getAttr());
  if (!target)
    return op.emitOpError() << side << " mesh " << ref
                            << " is not defined; declare it with reshard.mesh";
  auto mesh = dyn_cast<MeshOp>(target);
  if (!mesh)
    return op.emitOpError()
               .append(side, " mesh ", ref, " names a '",
                       target->getName().getStringRef(),
                       "', not a reshard.mesh")
               .attachNote(target->getLoc())
           << "symbol defined here";
  SmallVector<std::string> axes = mesh.getAxisNames();
  ShardingSpec spec = sharding.toSpec();
  ArrayRef<int64_t> shape = op.getSrcTensorType().getShape();
  std::string path = (side + "_sharding").str();
  bool ok = true;
  auto report = [&](llvm::Error err) {
    forEachLayoutError(std::move(err), [&](const LayoutError &e) {
      op.emitOpError()
              .append("@", op.getSymName(), " ", e.getPath(), ": ",
                      e.getMessage(), " (mesh ", ref, ")")
              .attachNote(mesh.getLoc())
          << "mesh " << ref << " declared here";
      ok = false;
    });
  };
  llvm::Expected<Sharding> resolved = resolveSharding(spec, axes, shape, path);
  if (!resolved) {
    report(resolved.takeError());
    return failure();
  }
  report(verifyQuantizedSide(
      *resolved, mesh.getShape(), axes, shape,
      getDtypeName(op.getSrcTensorType().getElementType()), path));
  return success(ok);
}

LogicalResult RedistributeOp::verifySymbolUses(SymbolTableCollection &symbols) {
  bool srcOk = succeeded(
      verifySide(*this, symbols, "src", getSrcMeshAttr(), getSrcSharding()));
  bool dstOk = succeeded(
      verifySide(*this, symbols, "dst", getDstMeshAttr(), getDstSharding()));
  if (!srcOk || !dstOk)
    return failure();
  // A quantized tensor's scales travel as `<name>.scale`.
  if (getDstSharding().isQuantized()) {
    auto scale = StringAttr::get(getContext(), getSymName() + kScaleSuffix);
    Operation *other =
        symbols.lookupNearestSymbolFrom((*this)->getParentOp(), scale);
    // A scales redistribution is the one allowed; whose scales it holds,
    // its own verifier checks.
    if (other && !other->hasAttr(kScalesOfAttr))
      return emitOpError()
                 .append("@", getSymName(),
                         " is quantized and its scales are named @\"",
                         scale.getValue(),
                         "\", but that name is taken; "
                         "rename one")
                 .attachNote(other->getLoc())
             << "@\"" << scale.getValue() << "\" defined here";
  }
  // What reshard-quantize decided, when a module states it.
  if (failed(verifyQuantDecision(*this, symbols)))
    return failure();
  if (FlatSymbolRefAttr topo = getTopologyAttr()) {
    Operation *target = symbols.lookupNearestSymbolFrom(*this, topo.getAttr());
    if (!target)
      return emitOpError() << "topology " << topo
                           << " is not defined; declare it with "
                              "reshard.topology";
    if (!isa<TopologyOp>(target))
      return emitOpError()
                 .append("topology ", topo, " names a '",
                         target->getName().getStringRef(),
                         "', not a reshard.topology")
                 .attachNote(target->getLoc())
             << "symbol defined here";
  }
  return success();
}
