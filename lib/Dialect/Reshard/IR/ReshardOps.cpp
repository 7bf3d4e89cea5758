//===- ReshardOps.cpp - Meshes, topologies, redistributions, pieces -------===//
//
// The layout checks themselves live in reshard/Layout (shared with the
// importer); here they are fed from the IR and their findings reported at
// the op.
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Reshard/IR/ReshardOps.h"
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"

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
  if (src.getElementType() != dst.getElementType())
    return emitOpError() << "source element type " << src.getElementType()
                         << " differs from destination element type "
                         << dst.getElementType()
                         << "; a redistribution moves elements unchanged";
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
  llvm::Expected<Sharding> resolved = resolveSharding(spec, axes, shape, path);
  forEachLayoutError(resolved.takeError(), [&](const LayoutError &e) {
    op.emitOpError()
            .append(e.getPath(), ": ", e.getMessage(), " (mesh ", ref, ")")
            .attachNote(mesh.getLoc())
        << "mesh " << ref << " declared here";
    ok = false;
  });
  return success(ok);
}

LogicalResult RedistributeOp::verifySymbolUses(SymbolTableCollection &symbols) {
  bool srcOk = succeeded(
      verifySide(*this, symbols, "src", getSrcMeshAttr(), getSrcSharding()));
  bool dstOk = succeeded(
      verifySide(*this, symbols, "dst", getDstMeshAttr(), getDstSharding()));
  if (!srcOk || !dstOk)
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

//===----------------------------------------------------------------------===//
// PiecesOp: one piece per line for people and tests; in memory three dense
// integer arrays (PieceTable), so that a whole model's table stays compact.
//===----------------------------------------------------------------------===//

PieceTable PiecesOp::toTable() {
  PieceTable table(getRank());
  table.rows.assign(getRows().begin(), getRows().end());
  table.holderOffsets.assign(getHolderOffsets().begin(),
                             getHolderOffsets().end());
  table.holderRanks.assign(getHolderRanks().begin(), getHolderRanks().end());
  return table;
}

PiecesOp PiecesOp::create(OpBuilder &builder, Location loc, StringRef tensor,
                          const PieceTable &table) {
  return PiecesOp::create(builder, loc, tensor, table.rank(),
                          table.holderOffsets, table.holderRanks, table.rows);
}

static ParseResult parseIntList(OpAsmParser &parser,
                                SmallVectorImpl<int64_t> &out) {
  return parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square,
                                        [&]() -> ParseResult {
                                          int64_t v;
                                          if (parser.parseInteger(v))
                                            return failure();
                                          out.push_back(v);
                                          return success();
                                        });
}

static void printIntList(OpAsmPrinter &p, ArrayRef<int64_t> values) {
  p << '[';
  llvm::interleaveComma(values, p);
  p << ']';
}

ParseResult PiecesOp::parse(OpAsmParser &parser, OperationState &result) {
  FlatSymbolRefAttr tensor;
  int64_t rank;
  if (parser.parseAttribute(tensor, "tensor", result.attributes) ||
      parser.parseKeyword("rank") || parser.parseInteger(rank) ||
      parser.parseKeyword("holders"))
    return failure();
  if (rank < 0 || rank > 64)
    return parser.emitError(parser.getCurrentLocation(),
                            "tensor rank must be in [0, 64]");
  SmallVector<int64_t> offsets = {0}, ranks, rows;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       if (parseIntList(parser, ranks))
                                         return failure();
                                       offsets.push_back(ranks.size());
                                       return success();
                                     }))
    return failure();
  auto parsePiece = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    SmallVector<int64_t> gOff, sizes, sOff, dOff;
    int64_t src, dst, group, via = -1, step = 0;
    if (parser.parseKeyword("box") || parseIntList(parser, gOff) ||
        parser.parseKeyword("size") || parseIntList(parser, sizes) ||
        parser.parseKeyword("from") || parser.parseInteger(src) ||
        parser.parseKeyword("at") || parseIntList(parser, sOff) ||
        parser.parseKeyword("to") || parser.parseInteger(dst) ||
        parser.parseKeyword("at") || parseIntList(parser, dOff) ||
        parser.parseKeyword("group") || parser.parseInteger(group))
      return failure();
    if (succeeded(parser.parseOptionalKeyword("via")) &&
        parser.parseInteger(via))
      return failure();
    if (succeeded(parser.parseOptionalKeyword("step")) &&
        parser.parseInteger(step))
      return failure();
    for (auto *list : {&gOff, &sizes, &sOff, &dOff})
      if (static_cast<int64_t>(list->size()) != rank)
        return parser.emitError(loc)
               << "a piece of a rank-" << rank << " tensor needs " << rank
               << " values per offset and size";
    rows.append({dst, src, group, via, step});
    rows.append(gOff);
    rows.append(sizes);
    rows.append(dOff);
    rows.append(sOff);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square,
                                     parsePiece) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Builder &b = parser.getBuilder();
  result.addAttribute("rank", b.getI64IntegerAttr(rank));
  result.addAttribute("holder_offsets", b.getDenseI64ArrayAttr(offsets));
  result.addAttribute("holder_ranks", b.getDenseI64ArrayAttr(ranks));
  result.addAttribute("rows", b.getDenseI64ArrayAttr(rows));
  return success();
}

void PiecesOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printAttributeWithoutType(getTensorAttr());
  p << " rank " << getRank() << " holders [";
  PieceTable table = toTable();
  for (size_t g = 0; g < table.numHolderGroups(); ++g) {
    if (g)
      p << ", ";
    printIntList(p, table.holders(g));
  }
  p << "] [";
  p.increaseIndent();
  for (size_t i = 0; i < table.size(); ++i) {
    PieceTable::Piece piece = table[i];
    if (i)
      p << ',';
    p.printNewline();
    p << "box ";
    printIntList(p, piece.globalOffset());
    p << " size ";
    printIntList(p, piece.sizes());
    p << " from " << piece.srcRank() << " at ";
    printIntList(p, piece.srcOffset());
    p << " to " << piece.dstRank() << " at ";
    printIntList(p, piece.dstOffset());
    p << " group " << piece.holderGroup();
    if (piece.via() != -1)
      p << " via " << piece.via();
    if (piece.step() != 0)
      p << " step " << piece.step();
  }
  p.decreaseIndent();
  if (table.size())
    p.printNewline();
  p << ']';
  p.printOptionalAttrDict(
      (*this)->getAttrs(),
      {"tensor", "rank", "holder_offsets", "holder_ranks", "rows"});
}

LogicalResult PiecesOp::verify() {
  int64_t rank = getRank();
  if (rank < 0 || rank > 64)
    return emitOpError() << "rank " << rank << " must be in [0, 64]";
  ArrayRef<int64_t> offsets = getHolderOffsets();
  if (offsets.empty() || offsets.front() != 0 ||
      offsets.back() != static_cast<int64_t>(getHolderRanks().size()))
    return emitOpError("holder_offsets must start at 0 and end at the number "
                       "of holder ranks");
  ArrayRef<int64_t> holderRanks = getHolderRanks();
  for (size_t g = 1; g < offsets.size(); ++g) {
    if (offsets[g] < offsets[g - 1])
      return emitOpError("holder_offsets must not decrease");
    if (offsets[g] == offsets[g - 1])
      return emitOpError() << "holder group " << g - 1 << " is empty";
    for (int64_t i = offsets[g - 1] + 1; i < offsets[g]; ++i)
      if (holderRanks[i] <= holderRanks[i - 1])
        return emitOpError() << "holder group " << g - 1
                             << " must list distinct ranks in ascending "
                                "order";
  }
  size_t width = PieceTable::rowWidth(rank);
  if (getRows().size() % width != 0)
    return emitOpError() << "rows hold " << getRows().size()
                         << " integers, not a multiple of the row width "
                         << width << " of a rank-" << rank << " tensor";
  int64_t groups = offsets.size() - 1;
  PieceTable table = toTable();
  for (size_t i = 0; i < table.size(); ++i) {
    PieceTable::Piece p = table[i];
    if (p.holderGroup() < 0 || p.holderGroup() >= groups)
      return emitOpError() << "piece " << i << " refers to holder group "
                           << p.holderGroup() << " of " << groups;
    if (p.via() < -1 || p.via() == p.dstRank())
      return emitOpError() << "piece " << i << " has via " << p.via()
                           << "; use -1 (direct) or another destination rank";
    if (p.step() < 0)
      return emitOpError() << "piece " << i << " has negative step "
                           << p.step();
    for (int64_t size : p.sizes())
      if (size <= 0)
        return emitOpError() << "piece " << i << " has an empty box";
    for (auto offsets : {p.globalOffset(), p.dstOffset(), p.srcOffset()})
      for (int64_t o : offsets)
        if (o < 0)
          return emitOpError() << "piece " << i << " has a negative offset";
  }
  return success();
}

LogicalResult PiecesOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto tensor =
      symbols.lookupNearestSymbolFrom<RedistributeOp>(*this, getTensorAttr());
  if (!tensor)
    return emitOpError() << "tensor " << getTensorAttr()
                         << " is not a reshard.redistribute in this module";
  if (tensor.getSrcTensorType().getRank() != static_cast<int64_t>(getRank()))
    return emitOpError() << "rank " << getRank() << " differs from the rank "
                         << tensor.getSrcTensorType().getRank() << " of tensor "
                         << getTensorAttr();
  return success();
}
