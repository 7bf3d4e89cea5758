//===- PiecesOp.cpp - The piece table op and the plan interop -------------===//
//
// Pieces print one per line for people and tests; in memory they are three
// dense integer arrays, so that a whole model's table stays compact.
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Reshard/IR/ReshardOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace reshard;

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
  auto side = [&](FlatSymbolRefAttr ref, ShardingAttr sharding,
                  SideLayout &out) -> LogicalResult {
    auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(op, ref.getAttr());
    if (!mesh)
      return op.emitOpError() << "mesh " << ref << " is not defined";
    out.mesh = mesh.toSpec();
    bool ok = true;
    std::optional<Sharding> resolved =
        resolveSharding(sharding.toSpec(), out.mesh.axes, layout.shape, "",
                        [&](const std::string &path, const std::string &msg) {
                          op.emitOpError() << path << ": " << msg;
                          ok = false;
                        });
    if (!ok || !resolved)
      return failure();
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

//===----------------------------------------------------------------------===//
// PiecesOp
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
  if (tensor.getSrcTensorType().getRank() != getRank())
    return emitOpError() << "rank " << getRank() << " differs from the rank "
                         << tensor.getSrcTensorType().getRank() << " of tensor "
                         << getTensorAttr();
  return success();
}
