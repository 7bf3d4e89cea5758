//===- ReshardPlanOps.cpp - Classes, groups, schedules, pieces ------------===//
//
// The planned form's ops. A class's verifier proves that its pattern tiles
// every destination shard exactly once and reads every box where a holder
// keeps it, on the pattern alone; a group's verifier holds its members to
// the class and its routes to the meshes.
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Reshard/IR/ReshardPlanOps.h"
#include "reshard/Dialect/IntListSyntax.h"
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"
#include "reshard/Dialect/Reshard/IR/ReshardOps.h"
#include "reshard/Layout/BoxOverlap.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace reshard;

#define GET_OP_CLASSES
#include "reshard/Dialect/Reshard/IR/ReshardPlanOps.cpp.inc"

/// Parses `[ item, item, ... ]` with one item per printed line.
static ParseResult parseRows(OpAsmParser &parser,
                             function_ref<ParseResult()> item) {
  return parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, item);
}

/// Prints `[`, then each of `n` items on its own line, then `]`.
static void printRows(OpAsmPrinter &p, size_t n,
                      function_ref<void(size_t)> item) {
  p << '[';
  p.increaseIndent();
  for (size_t i = 0; i < n; ++i) {
    if (i)
      p << ',';
    p.printNewline();
    item(i);
  }
  p.decreaseIndent();
  if (n)
    p.printNewline();
  p << ']';
}

/// The layout of the redistribution `ref` names, or failure (reported).
static FailureOr<TensorLayout> layoutOfSymbol(Operation *op,
                                              FlatSymbolRefAttr ref,
                                              SymbolTableCollection &symbols,
                                              StringRef what) {
  auto tensor =
      symbols.lookupNearestSymbolFrom<RedistributeOp>(op, ref.getAttr());
  if (!tensor)
    return op->emitOpError()
           << what << " " << ref << " is not a reshard.redistribute";
  return getTensorLayout(tensor, symbols);
}

//===----------------------------------------------------------------------===//
// ClassOp
//===----------------------------------------------------------------------===//

ClassPattern ClassOp::toPattern() {
  ClassPattern pattern(getRank());
  pattern.rows.assign(getRows().begin(), getRows().end());
  return pattern;
}

ClassOp ClassOp::create(OpBuilder &builder, Location loc, StringRef name,
                        StringRef exemplar, const ClassPattern &pattern) {
  return ClassOp::create(builder, loc, name, exemplar, pattern.rank(),
                         pattern.rows);
}

ParseResult ClassOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  FlatSymbolRefAttr exemplar;
  int64_t rank;
  if (parser.parseSymbolName(name, "sym_name", result.attributes) ||
      parser.parseKeyword("of") ||
      parser.parseAttribute(exemplar, "exemplar", result.attributes) ||
      parser.parseKeyword("rank") || parser.parseInteger(rank))
    return failure();
  if (rank < 0 || rank > 64)
    return parser.emitError(parser.getCurrentLocation(),
                            "tensor rank must be in [0, 64]");
  SmallVector<int64_t> rows;
  auto parsePiece = [&]() -> ParseResult {
    SMLoc loc = parser.getCurrentLocation();
    SmallVector<int64_t> gOff, sizes, dOff, sOff;
    int64_t dst, src;
    if (parser.parseKeyword("box") || parseIntList(parser, gOff) ||
        parser.parseKeyword("size") || parseIntList(parser, sizes) ||
        parser.parseKeyword("dst") || parser.parseInteger(dst) ||
        parser.parseKeyword("at") || parseIntList(parser, dOff) ||
        parser.parseKeyword("src") || parser.parseInteger(src) ||
        parser.parseKeyword("at") || parseIntList(parser, sOff))
      return failure();
    for (auto *list : {&gOff, &sizes, &dOff, &sOff})
      if (static_cast<int64_t>(list->size()) != rank)
        return parser.emitError(loc)
               << "a piece of a rank-" << rank << " tensor needs " << rank
               << " values per offset and size";
    rows.append({dst, src});
    for (auto *list : {&gOff, &sizes, &dOff, &sOff})
      rows.append(*list);
    return success();
  };
  if (parseRows(parser, parsePiece) ||
      parser.parseOptionalAttrDict(result.attributes))
    return failure();
  Builder &b = parser.getBuilder();
  result.addAttribute("rank", b.getI64IntegerAttr(rank));
  result.addAttribute("rows", b.getDenseI64ArrayAttr(rows));
  return success();
}

void ClassOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << " of ";
  p.printAttributeWithoutType(getExemplarAttr());
  p << " rank " << getRank() << ' ';
  ClassPattern pattern = toPattern();
  printRows(p, pattern.size(), [&](size_t i) {
    ClassPattern::Piece piece = pattern[i];
    p << "box ";
    printIntList(p, piece.globalOffset());
    p << " size ";
    printIntList(p, piece.sizes());
    p << " dst " << piece.dstCombo() << " at ";
    printIntList(p, piece.dstOffset());
    p << " src " << piece.srcCombo() << " at ";
    printIntList(p, piece.srcOffset());
  });
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"sym_name", "exemplar", "rank", "rows"});
}

LogicalResult ClassOp::verify() {
  int64_t rank = getRank();
  if (rank < 0 || rank > 64)
    return emitOpError() << "rank " << rank << " must be in [0, 64]";
  size_t width = ClassPattern::rowWidth(rank);
  if (getRows().size() % width != 0)
    return emitOpError() << "rows hold " << getRows().size()
                         << " integers, not a multiple of the row width "
                         << width << " of a rank-" << rank << " tensor";
  ClassPattern pattern = toPattern();
  for (size_t i = 0; i < pattern.size(); ++i) {
    ClassPattern::Piece p = pattern[i];
    if (p.dstCombo() < 0 || p.srcCombo() < 0)
      return emitOpError() << "piece " << i << " names a negative combo";
    if (i && p.dstCombo() < pattern[i - 1].dstCombo())
      return emitOpError() << "piece " << i << " of destination combo "
                           << p.dstCombo() << " follows combo "
                           << pattern[i - 1].dstCombo()
                           << "; pieces are ordered by destination combo";
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

static std::string fmt(ArrayRef<int64_t> v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

LogicalResult ClassOp::verifySymbolUses(SymbolTableCollection &symbols) {
  FailureOr<TensorLayout> layout =
      layoutOfSymbol(*this, getExemplarAttr(), symbols, "exemplar");
  if (failed(layout))
    return failure();
  if (static_cast<int64_t>(layout->shape.size()) != getRankAttr().getInt())
    return emitOpError() << "rank " << getRank() << " differs from the rank "
                         << layout->shape.size() << " of exemplar "
                         << getExemplarAttr();
  MeshAxisSplit src(layout->src.mesh.shape, layout->src.sharding);
  MeshAxisSplit dst(layout->dst.mesh.shape, layout->dst.sharding);
  ShardGeometry srcGeom = layout->srcGeometry(),
                dstGeom = layout->dstGeometry();
  ClassPattern pattern = toPattern();
  // Each piece is where the pattern says on both sides...
  for (size_t i = 0; i < pattern.size(); ++i) {
    ClassPattern::Piece p = pattern[i];
    auto where = [&] {
      return emitOpError() << "piece " << i << " (box at "
                           << fmt(p.globalOffset()) << " of size "
                           << fmt(p.sizes()) << ") ";
    };
    if (p.dstCombo() >= dst.numCombos())
      return where() << "names destination combo " << p.dstCombo() << " of "
                     << dst.numCombos();
    if (p.srcCombo() >= src.numCombos())
      return where() << "names source combo " << p.srcCombo() << " of "
                     << src.numCombos();
    for (unsigned d = 0; d < layout->shape.size(); ++d)
      if (p.globalOffset()[d] > layout->shape[d] - p.sizes()[d])
        return where() << "leaves the global shape " << fmt(layout->shape);
    if (!dstGeom.holdsBox(dst.coordsOf(p.dstCombo()), p.globalOffset(),
                          p.sizes(), p.dstOffset()))
      return where() << "is not stored at " << fmt(p.dstOffset())
                     << " in the shard of destination combo " << p.dstCombo();
    if (!srcGeom.holdsBox(src.coordsOf(p.srcCombo()), p.globalOffset(),
                          p.sizes(), p.srcOffset()))
      return where() << "is not stored at " << fmt(p.srcOffset())
                     << " in the shard of source combo " << p.srcCombo();
  }
  // ...and the pieces of each destination combo tile its shard exactly
  // once, searched in local coordinates: a piece is a box there too
  // (checked above), and a valid plan's fill the shard's box, whatever
  // blocks or order make its global indices.
  size_t first = 0;
  for (int64_t c = 0, e = dst.numCombos(); c < e; ++c) {
    size_t end = first;
    while (end < pattern.size() && pattern[end].dstCombo() == c)
      ++end;
    int64_t shard = dstGeom.localNumElements(dst.coordsOf(c));
    if (std::optional<TilingFault> fault = findTilingFault(
            end - first,
            [&](size_t i) { return pattern[first + i].dstOffset(); },
            [&](size_t i) { return pattern[first + i].sizes(); }, shard)) {
      if (fault->overlap)
        return emitOpError()
               << "pieces " << first + fault->overlap->first << " and "
               << first + fault->overlap->second << " of destination combo "
               << c << " overlap; each element arrives once";
      return emitOpError() << "the pieces of destination combo " << c << " "
                           << fault->describeCount(shard)
                           << "; they must tile the shard";
    }
    first = end;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// GroupOp
//===----------------------------------------------------------------------===//

ParseResult GroupOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  FlatSymbolRefAttr cls, src, dst;
  if (parser.parseSymbolName(name, "sym_name", result.attributes) ||
      parser.parseKeyword("class") ||
      parser.parseAttribute(cls, "class_name", result.attributes) ||
      parser.parseKeyword("from") ||
      parser.parseAttribute(src, "src_mesh", result.attributes) ||
      parser.parseKeyword("to") ||
      parser.parseAttribute(dst, "dst_mesh", result.attributes) ||
      parser.parseKeyword("tensors"))
    return failure();
  SmallVector<Attribute> tensors;
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square,
                                     [&]() -> ParseResult {
                                       FlatSymbolRefAttr t;
                                       if (parser.parseAttribute(t))
                                         return failure();
                                       tensors.push_back(t);
                                       return success();
                                     }))
    return failure();
  Builder &b = parser.getBuilder();
  result.addAttribute("tensors", b.getArrayAttr(tensors));
  SmallVector<int64_t> routes;
  if (succeeded(parser.parseOptionalKeyword("routing"))) {
    StringRef keyword;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(&keyword))
      return failure();
    std::optional<Routing> routing = symbolizeRouting(keyword);
    if (!routing)
      return parser.emitError(loc, "routing must be balanced or direct");
    result.addAttribute("routing", RoutingAttr::get(b.getContext(), *routing));
    if (succeeded(parser.parseOptionalKeyword("routes"))) {
      auto parseRoute = [&]() -> ParseResult {
        int64_t piece, key, holder, entry = 0, feeder = -1;
        StringRef kind;
        SMLoc at = parser.getCurrentLocation();
        if (parser.parseKeyword("piece") || parser.parseInteger(piece) ||
            parser.parseKeyword(&kind) || parser.parseInteger(key) ||
            parser.parseKeyword("holder") || parser.parseInteger(holder))
          return failure();
        if (kind != "nvlink" && kind != "network")
          return parser.emitError(at, "a route is nvlink or network");
        if (kind == "network" &&
            (parser.parseKeyword("entry") || parser.parseInteger(entry)))
          return failure();
        if (kind == "network" &&
            succeeded(parser.parseOptionalKeyword("from")) &&
            (parser.parseKeyword("domain") || parser.parseInteger(feeder)))
          return failure();
        routes.append(
            {piece, kind == "network" ? 1 : 0, key, holder, entry, feeder});
        return success();
      };
      if (parseRows(parser, parseRoute))
        return failure();
    }
  }
  result.addAttribute("routes", b.getDenseI64ArrayAttr(routes));
  return parser.parseOptionalAttrDict(result.attributes);
}

void GroupOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << " class ";
  p.printAttributeWithoutType(getClassNameAttr());
  p << " from ";
  p.printAttributeWithoutType(getSrcMeshAttr());
  p << " to ";
  p.printAttributeWithoutType(getDstMeshAttr());
  p << " tensors [";
  llvm::interleaveComma(getTensors(), p,
                        [&](Attribute t) { p.printAttributeWithoutType(t); });
  p << ']';
  if (std::optional<Routing> routing = getRouting()) {
    p << " routing " << stringifyRouting(*routing);
    std::vector<RouteRow> routes = RouteRow::fromRows(getRoutes());
    if (!routes.empty()) {
      p << " routes ";
      printRows(p, routes.size(), [&](size_t i) {
        const RouteRow &r = routes[i];
        bool network = r.kind == RouteKind::Network;
        p << "piece " << r.piece << (network ? " network " : " nvlink ")
          << r.key << " holder " << r.holderBase;
        if (network)
          p << " entry " << r.entryBase;
        if (network && r.feeder >= 0)
          p << " from domain " << r.feeder;
      });
    }
  }
  p.printOptionalAttrDict((*this)->getAttrs(),
                          {"sym_name", "class_name", "src_mesh", "dst_mesh",
                           "tensors", "routing", "routes"});
}

LogicalResult GroupOp::verify() {
  if (getTensors().empty())
    return emitOpError("lists no tensors; a group has at least one");
  llvm::SmallDenseSet<Attribute> seen;
  for (Attribute tensor : getTensors())
    if (!seen.insert(tensor).second)
      return emitOpError() << "lists tensor " << tensor
                           << " twice; a group lists each member once";
  ArrayRef<int64_t> rows = getRoutes();
  if (rows.size() % RouteRow::kWidth)
    return emitOpError() << "routes hold " << rows.size()
                         << " integers, not rows of " << RouteRow::kWidth;
  if (!rows.empty() && getRouting() != Routing::Balanced)
    return emitOpError("has routes but is not routed balanced");
  std::vector<RouteRow> routes = RouteRow::fromRows(rows);
  for (size_t i = 0; i < routes.size(); ++i) {
    const RouteRow &r = routes[i];
    int64_t kind = static_cast<int64_t>(r.kind);
    if (r.piece < 0 || r.key < 0 || r.holderBase < 0 || r.entryBase < 0 ||
        (kind != 0 && kind != 1) ||
        (r.kind == RouteKind::NVLink && r.entryBase != 0))
      return emitOpError() << "route " << i
                           << " is malformed: pieces, keys and bases are "
                              "non-negative, the kind is nvlink or network, "
                              "and an nvlink route has no entry";
    if (i && !(routes[i - 1] < r))
      return emitOpError() << "route " << i << " does not follow route "
                           << i - 1
                           << "; routes are sorted by (piece, kind, key), "
                              "one per decision";
  }
  return success();
}

LogicalResult GroupOp::verifySymbolUses(SymbolTableCollection &symbols) {
  auto cls =
      symbols.lookupNearestSymbolFrom<ClassOp>(*this, getClassNameAttr());
  if (!cls)
    return emitOpError() << "class " << getClassNameAttr()
                         << " is not a reshard.class";
  for (FlatSymbolRefAttr mesh : {getSrcMeshAttr(), getDstMeshAttr()})
    if (!symbols.lookupNearestSymbolFrom<MeshOp>(*this, mesh.getAttr()))
      return emitOpError() << "mesh " << mesh << " is not a reshard.mesh";
  auto exemplarOp = symbols.lookupNearestSymbolFrom<RedistributeOp>(
      cls, cls.getExemplarAttr().getAttr());
  if (!exemplarOp)
    return cls.emitOpError() << "exemplar " << cls.getExemplarAttr()
                             << " is not a reshard.redistribute";
  FailureOr<TensorLayout> exemplar = getTensorLayout(exemplarOp, symbols);
  if (failed(exemplar))
    return failure();
  for (Attribute attr : getTensors()) {
    auto ref = cast<FlatSymbolRefAttr>(attr);
    auto tensor =
        symbols.lookupNearestSymbolFrom<RedistributeOp>(*this, ref.getAttr());
    if (!tensor)
      return emitOpError() << "tensor " << ref
                           << " is not a reshard.redistribute";
    // Between meshes of the group's ranks (mesh symbols may differ).
    // Attributes are uniqued: equal rank lists are one attribute.
    auto ranksOf = [&](FlatSymbolRefAttr mesh) {
      return symbols.lookupNearestSymbolFrom<MeshOp>(*this, mesh.getAttr())
          .getRanksAttr();
    };
    if (ranksOf(tensor.getSrcMeshAttr()) != ranksOf(getSrcMeshAttr()) ||
        ranksOf(tensor.getDstMeshAttr()) != ranksOf(getDstMeshAttr()))
      return emitOpError() << "tensor " << ref << " moves from "
                           << tensor.getSrcMeshAttr() << " to "
                           << tensor.getDstMeshAttr()
                           << ", whose ranks are not those of the group's "
                              "meshes";
    // The same class: shape, size of a moved element, shardings and
    // (through the meshes' ops) mesh shapes as the exemplar's. Element types
    // of one size share pieces (bf16 and fp16; the bf16 and fp32 sources of
    // FP8 payloads quantized on the sender; FP8 payloads quantized on the
    // receiver move at their source's size).
    auto meshShape = [&](RedistributeOp op, FlatSymbolRefAttr ref) {
      return symbols.lookupNearestSymbolFrom<MeshOp>(op, ref.getAttr())
          .getShapeAttr();
    };
    auto movedBytes = [](RedistributeOp op) -> std::optional<int64_t> {
      if (isQuantizedOnSender(op))
        return 1;
      return getElementTypeBytes(op.getSrcTensorType().getElementType());
    };
    // Shardings as resolved, as the planner groups them: two spellings of
    // one storage order are one class. Equal attributes over the same mesh
    // symbols need no resolving (axis names mean mesh axes only there).
    auto sameShardings = [&] {
      if (tensor.getSrcMeshAttr() == exemplarOp.getSrcMeshAttr() &&
          tensor.getDstMeshAttr() == exemplarOp.getDstMeshAttr() &&
          tensor.getSrcSharding() == exemplarOp.getSrcSharding() &&
          tensor.getDstSharding() == exemplarOp.getDstSharding())
        return true;
      FailureOr<TensorLayout> layout = getTensorLayout(tensor, symbols);
      return succeeded(layout) &&
             layout->src.sharding == exemplar->src.sharding &&
             layout->dst.sharding == exemplar->dst.sharding;
    };
    if (tensor.getSrcTensorType().getShape() !=
            exemplarOp.getSrcTensorType().getShape() ||
        movedBytes(tensor) != movedBytes(exemplarOp) || !sameShardings() ||
        meshShape(tensor, tensor.getSrcMeshAttr()) !=
            meshShape(exemplarOp, exemplarOp.getSrcMeshAttr()) ||
        meshShape(tensor, tensor.getDstMeshAttr()) !=
            meshShape(exemplarOp, exemplarOp.getDstMeshAttr()))
      return emitOpError() << "tensor " << ref << " is not of class "
                           << getClassNameAttr()
                           << ": shape, element size, shardings and mesh "
                              "shapes must be those of its exemplar "
                           << cls.getExemplarAttr();
  }
  ClassPattern pattern = cls.toPattern();
  MeshAxisSplit src(exemplar->src.mesh.shape, exemplar->src.sharding);
  MeshAxisSplit dst(exemplar->dst.mesh.shape, exemplar->dst.sharding);
  for (const RouteRow &r : RouteRow::fromRows(getRoutes())) {
    if (r.piece >= static_cast<int64_t>(pattern.size()))
      return emitOpError() << "a route names piece " << r.piece << " of "
                           << pattern.size();
    if (r.kind == RouteKind::NVLink && r.key >= dst.numDevices())
      return emitOpError() << "an nvlink route names replica " << r.key
                           << " of a destination mesh of " << dst.numDevices()
                           << " devices";
    if (r.feeder < -1 || r.feeder == r.key ||
        (r.feeder >= 0 && r.kind != RouteKind::Network))
      return emitOpError() << "a route of piece " << r.piece
                           << " is fed from domain " << r.feeder
                           << "; only a network route is fed, from another "
                              "domain";
    if (r.holderBase >= src.numReplicas() || r.entryBase >= dst.numReplicas())
      return emitOpError() << "a route of piece " << r.piece
                           << " starts past its candidates (holder base "
                           << r.holderBase << " of " << src.numReplicas()
                           << ", entry base " << r.entryBase << " of "
                           << dst.numReplicas() << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ScheduleOp
//===----------------------------------------------------------------------===//

ParseResult ScheduleOp::parse(OpAsmParser &parser, OperationState &result) {
  int64_t budget, maxOps;
  if (parser.parseKeyword("staging_budget") || parser.parseEqual() ||
      parser.parseInteger(budget) || parser.parseKeyword("max_ops_per_step") ||
      parser.parseEqual() || parser.parseInteger(maxOps))
    return failure();
  SmallVector<int64_t> rows;
  auto parseStream = [&]() -> ParseResult {
    int64_t from, to, phase, start, quota;
    if (parser.parseKeyword("stream") || parser.parseInteger(from) ||
        parser.parseArrow() || parser.parseInteger(to) ||
        parser.parseKeyword("phase") || parser.parseInteger(phase) ||
        parser.parseKeyword("start") || parser.parseInteger(start) ||
        parser.parseKeyword("quota") || parser.parseInteger(quota))
      return failure();
    rows.append({from, to, phase, start, quota});
    return success();
  };
  if (parseRows(parser, parseStream))
    return failure();
  Builder &b = parser.getBuilder();
  if (succeeded(parser.parseOptionalKeyword("transits"))) {
    SmallVector<int64_t> transits;
    auto parseTransit = [&]() -> ParseResult {
      int64_t from, to, via;
      if (parser.parseInteger(from) || parser.parseArrow() ||
          parser.parseInteger(to) || parser.parseKeyword("via") ||
          parser.parseInteger(via))
        return failure();
      transits.append({from, to, via});
      return success();
    };
    if (parseRows(parser, parseTransit))
      return failure();
    result.addAttribute("transits", b.getDenseI64ArrayAttr(transits));
  }
  if (parser.parseOptionalAttrDict(result.attributes))
    return failure();
  result.addAttribute("staging_budget", b.getI64IntegerAttr(budget));
  result.addAttribute("max_ops_per_step", b.getI64IntegerAttr(maxOps));
  result.addAttribute("streams", b.getDenseI64ArrayAttr(rows));
  return success();
}

void ScheduleOp::print(OpAsmPrinter &p) {
  p << " staging_budget = " << getStagingBudgetAttr().getInt()
    << " max_ops_per_step = " << getMaxOpsPerStepAttr().getInt() << ' ';
  std::vector<PlanStream> streams = PlanStream::fromRows(getStreams());
  printRows(p, streams.size(), [&](size_t i) {
    const PlanStream &s = streams[i];
    p << "stream " << s.sender << " -> " << s.receiver << " phase " << s.phase
      << " start " << s.start << " quota " << s.quota;
  });
  if (std::optional<ArrayRef<int64_t>> rows = getTransits()) {
    std::vector<PlanTransit> transits = PlanTransit::fromRows(*rows);
    p << " transits ";
    printRows(p, transits.size(), [&](size_t i) {
      p << transits[i].sender << " -> " << transits[i].receiver << " via "
        << transits[i].via;
    });
  }
  p.printOptionalAttrDict(
      (*this)->getAttrs(),
      {"staging_budget", "max_ops_per_step", "streams", "transits"});
}

LogicalResult ScheduleOp::verify() {
  if (getStagingBudgetAttr().getInt() < kMinStagingBudget)
    return emitOpError() << "staging_budget of "
                         << getStagingBudgetAttr().getInt()
                         << " bytes cannot hold one 8-byte element; it must "
                            "be at least "
                         << kMinStagingBudget;
  if (getMaxOpsPerStepAttr().getInt() < 2)
    return emitOpError() << "max_ops_per_step of "
                         << getMaxOpsPerStepAttr().getInt()
                         << " leaves no room for a send and a receive; it "
                            "must be at least 2";
  if (getStreams().size() % PlanStream::kWidth)
    return emitOpError() << "streams hold " << getStreams().size()
                         << " integers, not rows of " << PlanStream::kWidth;
  std::vector<PlanStream> streams = PlanStream::fromRows(getStreams());
  for (size_t i = 0; i < streams.size(); ++i) {
    const PlanStream &s = streams[i];
    if (s.sender < 0 || s.receiver < 0 || s.sender == s.receiver ||
        s.phase < 0 || s.phase > kTransitOutPhase + kMaxRank || s.start < 0 ||
        s.start >= kMaxRankSteps || s.quota < 1 ||
        s.quota > getStagingBudgetAttr().getInt())
      return emitOpError()
             << "stream " << i << " (" << s.sender << " -> " << s.receiver
             << ") is malformed: two different ranks, a phase of at least "
                "0, a start of 0 to "
             << kMaxRankSteps - 1
             << " (a rank takes at most 2^22 steps) and a quota of 1 to the "
                "staging budget";
    if (i && !(streams[i - 1] < s))
      return emitOpError() << "stream " << i << " does not follow stream "
                           << i - 1
                           << "; streams are sorted by (sender, receiver, "
                              "phase), one each";
  }
  std::optional<ArrayRef<int64_t>> rows = getTransits();
  if (!rows)
    return success();
  if (rows->size() % PlanTransit::kWidth)
    return emitOpError() << "transits hold " << rows->size()
                         << " integers, not rows of " << PlanTransit::kWidth;
  std::vector<PlanTransit> transits = PlanTransit::fromRows(*rows);
  for (size_t i = 0; i < transits.size(); ++i) {
    const PlanTransit &t = transits[i];
    if (t.sender < 0 || t.receiver < 0 || t.via < 0 || t.sender == t.receiver ||
        t.via == t.sender || t.via == t.receiver)
      return emitOpError() << "transit " << i << " (" << t.sender << " -> "
                           << t.receiver << " via " << t.via
                           << ") is malformed: three different ranks";
    if (i && !(transits[i - 1] < t))
      return emitOpError() << "transit " << i << " does not follow transit "
                           << i - 1
                           << "; transits are sorted by (sender, receiver), "
                              "one each";
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
