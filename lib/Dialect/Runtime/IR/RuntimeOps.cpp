//===- RuntimeOps.cpp - reshard_rt ops: syntax and per-op checks ----------===//
//
// Each op checks what it can see alone (a class its pieces, a rank the
// order of its streams); the plan checks the rest on the engine tables
// (PlanChecks.cpp).
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"

#include "reshard/Dialect/IntListSyntax.h"
#include "reshard/Dialect/Runtime/IR/PlanEncoding.h"
#include "reshard/Layout/BoxDescriptor.h"
#include "reshard/Layout/BoxOverlap.h"
#include "reshard/Layout/Layout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <limits>
#include <set>

using namespace mlir;
using namespace reshard;
using namespace reshard::rt;

#define GET_ATTRDEF_CLASSES
#include "reshard/Dialect/Runtime/IR/RuntimeAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "reshard/Dialect/Runtime/IR/RuntimeOps.cpp.inc"

void RuntimeDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "reshard/Dialect/Runtime/IR/RuntimeAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Box and copy descriptors
//===----------------------------------------------------------------------===//

/// `+N`
static ParseResult parseOffset(AsmParser &parser, int64_t &value) {
  if (parser.parsePlus() || parser.parseInteger(value))
    return failure();
  return success();
}

/// `run R (x [loop, ...])?`, each loop `count by stride (-> stride)?`.
static ParseResult parseRunAndLoops(AsmParser &parser, int64_t &run,
                                    unsigned strides,
                                    SmallVectorImpl<int64_t> &loops) {
  if (parser.parseKeyword("run") || parser.parseInteger(run))
    return failure();
  if (parser.parseOptionalKeyword("x"))
    return success();
  return parser.parseCommaSeparatedList(
      AsmParser::Delimiter::Square, [&]() -> ParseResult {
        int64_t count, stride;
        if (parser.parseInteger(count) || parser.parseKeyword("by") ||
            parser.parseInteger(stride))
          return failure();
        loops.append({count, stride});
        if (strides == 2) {
          if (parser.parseArrow() || parser.parseInteger(stride))
            return failure();
          loops.push_back(stride);
        }
        return success();
      });
}

static void printRunAndLoops(AsmPrinter &p, int64_t run,
                             ArrayRef<int64_t> loops, unsigned width) {
  p << " run " << run;
  if (loops.empty())
    return;
  p << " x [";
  for (size_t i = 0; i < loops.size(); i += width) {
    p << (i ? ", " : "") << loops[i] << " by " << loops[i + 1];
    if (width == 3)
      p << " -> " << loops[i + 2];
  }
  p << "]";
}

Attribute BoxAttr::parse(AsmParser &parser, Type) {
  int64_t offset, run;
  SmallVector<int64_t> loops;
  if (parser.parseLess() || parseOffset(parser, offset) ||
      parseRunAndLoops(parser, run, 1, loops) || parser.parseGreater())
    return {};
  return BoxAttr::get(parser.getContext(), offset, run, loops);
}

void BoxAttr::print(AsmPrinter &p) const {
  p << "<+" << getOffset();
  printRunAndLoops(p, getRun(), getLoops(), 2);
  p << ">";
}

SmallVector<int64_t> BoxAttr::descriptor() const {
  SmallVector<int64_t> d = {getOffset(), getRun(),
                            static_cast<int64_t>(getLoops().size() / 2)};
  d.append(getLoops().begin(), getLoops().end());
  return d;
}

Attribute CopyAttr::parse(AsmParser &parser, Type) {
  int64_t src, dst, run;
  SmallVector<int64_t> loops;
  if (parser.parseLess() || parseOffset(parser, src) || parser.parseArrow() ||
      parseOffset(parser, dst) || parseRunAndLoops(parser, run, 2, loops) ||
      parser.parseGreater())
    return {};
  return CopyAttr::get(parser.getContext(), src, dst, run, loops);
}

void CopyAttr::print(AsmPrinter &p) const {
  p << "<+" << getSrcOffset() << " -> +" << getDstOffset();
  printRunAndLoops(p, getRun(), getLoops(), 3);
  p << ">";
}

SmallVector<int64_t> CopyAttr::descriptor() const {
  SmallVector<int64_t> d = {getSrcOffset(), getDstOffset(), getRun(),
                            static_cast<int64_t>(getLoops().size() / 3)};
  d.append(getLoops().begin(), getLoops().end());
  return d;
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  std::set<int64_t> seen;
  for (int64_t r : getRanks())
    if (r < 0 || !seen.insert(r).second)
      return emitOpError() << "lists rank " << r
                           << (r < 0 ? ", which is negative" : " twice");
  if (getRanks().empty())
    return emitOpError() << "has no ranks";
  return success();
}

//===----------------------------------------------------------------------===//
// ClassOp
//===----------------------------------------------------------------------===//

ParseResult ClassOp::parse(OpAsmParser &parser, OperationState &result) {
  int64_t index, elementBytes, rank;
  if (parser.parseInteger(index) || parser.parseKeyword("element_bytes") ||
      parser.parseInteger(elementBytes) || parser.parseKeyword("rank") ||
      parser.parseInteger(rank))
    return failure();
  Builder &b = parser.getBuilder();
  result.addAttribute("index", b.getI64IntegerAttr(index));
  result.addAttribute("element_bytes", b.getI64IntegerAttr(elementBytes));
  result.addAttribute("rank", b.getI64IntegerAttr(rank));
  for (StringRef side : {"src", "dst"}) {
    SmallVector<int64_t> comboOf, shapes;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseKeyword(side) || parser.parseKeyword("combos") ||
        parseIntList(parser, comboOf) || parser.parseKeyword("shapes") ||
        parser.parseCommaSeparatedList(
            OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
              size_t before = shapes.size();
              if (parseIntList(parser, shapes))
                return failure();
              if (static_cast<int64_t>(shapes.size() - before) != rank)
                return parser.emitError(loc)
                       << "a shard shape of a rank-" << rank << " class has "
                       << rank << " dims";
              return success();
            }))
      return failure();
    result.addAttribute((side + "_combo_of").str(),
                        b.getDenseI64ArrayAttr(comboOf));
    result.addAttribute((side + "_shapes").str(),
                        b.getDenseI64ArrayAttr(shapes));
    SmallVector<int64_t> dimOrder;
    if (succeeded(parser.parseOptionalKeyword("dim_order"))) {
      if (parseIntList(parser, dimOrder))
        return failure();
      result.addAttribute((side + "_dim_order").str(),
                          b.getDenseI64ArrayAttr(dimOrder));
    }
  }
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  Region *body = result.addRegion();
  if (parser.parseRegion(*body))
    return failure();
  if (body->empty())
    body->emplaceBlock();
  return success();
}

void ClassOp::print(OpAsmPrinter &p) {
  p << " " << getIndex() << " element_bytes " << getElementBytes() << " rank "
    << getRank();
  for (bool src : {true, false}) {
    p << (src ? " src" : " dst") << " combos ";
    printIntList(p, src ? getSrcComboOf() : getDstComboOf());
    p << " shapes [";
    for (int64_t c = 0, n = getNumCombos(src); c < n; ++c) {
      p << (c ? ", " : "");
      printIntList(p, getShardShape(src, c));
    }
    p << "]";
    if ((src ? getSrcDimOrder() : getDstDimOrder()).has_value()) {
      p << " dim_order ";
      printIntList(p, getDimOrder(src));
    }
  }
  p.printOptionalAttrDictWithKeyword(
      (*this)->getAttrs(),
      {"index", "element_bytes", "rank", "src_combo_of", "src_shapes",
       "dst_combo_of", "dst_shapes", "src_dim_order", "dst_dim_order"});
  p << " ";
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

int64_t ClassOp::getNumCombos(bool src) {
  int64_t rank = getRank();
  size_t n = (src ? getSrcShapes() : getDstShapes()).size();
  return rank > 0 ? static_cast<int64_t>(n) / rank : 1;
}

ArrayRef<int64_t> ClassOp::getDimOrder(bool src) {
  std::optional<ArrayRef<int64_t>> order =
      src ? getSrcDimOrder() : getDstDimOrder();
  return order ? *order : ArrayRef<int64_t>();
}

ArrayRef<int64_t> ClassOp::getShardShape(bool src, int64_t combo) {
  ArrayRef<int64_t> shapes = src ? getSrcShapes() : getDstShapes();
  int64_t rank = getRank();
  return shapes.slice(combo * rank, rank);
}

static std::string fmt(ArrayRef<int64_t> v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

LogicalResult ClassOp::verifyRegions() {
  int64_t rank = getRank(), eb = getElementBytes();
  if (rank < 0 || rank > engine::kMaxLoops)
    return emitOpError() << "rank " << rank << " must be in [0, "
                         << engine::kMaxLoops << "]";
  if (eb < 1)
    return emitOpError() << "element_bytes " << eb << " must be positive";
  for (bool src : {true, false}) {
    ArrayRef<int64_t> shapes = src ? getSrcShapes() : getDstShapes();
    if (rank > 0 && shapes.size() % rank)
      return emitOpError() << "has " << shapes.size()
                           << " shape entries, not a multiple of its rank";
    if (rank == 0 && !shapes.empty())
      return emitOpError() << "is rank 0 but lists shard dims";
    int64_t combos = getNumCombos(src);
    for (int64_t c = 0; c < combos; ++c) {
      std::optional<int64_t> bytes = eb;
      for (int64_t s : getShardShape(src, c)) {
        if (s < 0)
          return emitOpError() << "has a negative shard dim";
        if (bytes)
          bytes = llvm::checkedMul(*bytes, s);
      }
      if (!bytes)
        return emitOpError() << "has a shard whose bytes overflow 64 bits";
    }
    ArrayRef<int64_t> dimOrder = getDimOrder(src);
    if (!dimOrder.empty() && !isPermutation(dimOrder, rank))
      return emitOpError() << "has " << (src ? "source" : "destination")
                           << " dim_order " << fmt(dimOrder)
                           << ", not a permutation of its " << rank
                           << " dim(s)";
    for (int64_t c : src ? getSrcComboOf() : getDstComboOf())
      if (c < 0 || c >= combos)
        return emitOpError() << "maps a " << (src ? "source" : "destination")
                             << " device to combo " << c << " of " << combos;
  }
  SmallVector<PieceOp> pieces(getBody().front().getOps<PieceOp>());
  if (static_cast<size_t>(std::distance(
          getBody().front().begin(), getBody().front().end())) != pieces.size())
    return emitOpError() << "holds ops other than reshard_rt.piece";
  ArrayRef<int64_t> srcOrder = getDimOrder(true), dstOrder = getDimOrder(false);
  for (auto [i, piece] : llvm::enumerate(pieces)) {
    if (static_cast<int64_t>(piece.getSizes().size()) != rank)
      return piece.emitOpError() << "has a rank-" << piece.getSizes().size()
                                 << " box in a rank-" << rank << " class";
    if (piece.getDstComboAttr().getInt() >= getNumCombos(false) ||
        piece.getSrcComboAttr().getInt() >= getNumCombos(true))
      return piece.emitOpError() << "names a combo the class does not have";
    if (i && piece.getDstCombo() < pieces[i - 1].getDstCombo())
      return piece.emitOpError() << "follows a piece of a later destination "
                                    "combo; pieces are ordered by it";
    ArrayRef<int64_t> srcShape = getShardShape(true, piece.getSrcCombo());
    ArrayRef<int64_t> dstShape = getShardShape(false, piece.getDstCombo());
    for (auto [shape, offset, side] :
         {std::tuple{srcShape, piece.getSrcOffset(), "source"},
          std::tuple{dstShape, piece.getDstOffset(), "destination"}})
      for (int64_t d = 0; d < rank; ++d)
        if (offset[d] + piece.getSizes()[d] > shape[d])
          return piece.emitOpError()
                 << "box of size " << fmt(piece.getSizes()) << " at "
                 << fmt(offset) << " leaves its " << side << " shard of shape "
                 << fmt(shape);
    // The descriptors are what the box implies: the engine trusts them.
    SmallVector<int64_t> pack = boxDescriptor(srcShape, srcOrder,
                                              piece.getSrcOffset(),
                                              piece.getSizes(), eb),
                         unpack = boxDescriptor(dstShape, dstOrder,
                                                piece.getDstOffset(),
                                                piece.getSizes(), eb),
                         copy = copyDescriptor(srcShape, srcOrder,
                                               piece.getSrcOffset(), dstShape,
                                               dstOrder, piece.getDstOffset(),
                                               piece.getSizes(), eb);
    if (ArrayRef<int64_t>(piece.getPack().descriptor()) != ArrayRef(pack) ||
        ArrayRef<int64_t>(piece.getUnpack().descriptor()) != ArrayRef(unpack) ||
        ArrayRef<int64_t>(piece.getCopy().descriptor()) != ArrayRef(copy)) {
      auto box = [&](ArrayRef<int64_t> d) {
        return BoxAttr::get(getContext(), d[0], d[1], d.drop_front(3));
      };
      return piece.emitOpError()
             << "has descriptors that do not describe its box; expected pack "
             << box(pack) << " unpack " << box(unpack) << " copy "
             << CopyAttr::get(getContext(), copy[0], copy[1], copy[2],
                              ArrayRef<int64_t>(copy).drop_front(4));
    }
  }
  // The pieces of each destination combo (consecutive: ordered by it) tile
  // its shard exactly once.
  size_t first = 0;
  SmallVector<ArrayRef<int64_t>> offsets, sizes;
  for (int64_t c = 0, e = getNumCombos(false); c < e; ++c) {
    offsets.clear();
    sizes.clear();
    size_t end = first;
    for (; end < pieces.size() && pieces[end].getDstCombo() == c; ++end) {
      offsets.push_back(pieces[end].getDstOffset());
      sizes.push_back(pieces[end].getSizes());
    }
    int64_t shard = 1;
    for (int64_t s : getShardShape(false, c))
      shard *= s;
    if (std::optional<TilingFault> fault = findTilingFault(
            end - first, [&](size_t i) { return offsets[i]; },
            [&](size_t i) { return sizes[i]; }, shard)) {
      if (!fault->overlap)
        return emitOpError()
               << "the pieces of destination combo " << c << " "
               << fault->describeCount(shard) << "; they must tile the shard";
      InFlightDiagnostic diag =
          pieces[first + fault->overlap->second].emitOpError()
          << "overlaps another piece of destination combo " << c
          << "; each element arrives once";
      diag.attachNote(pieces[first + fault->overlap->first].getLoc())
          << "the other piece";
      return diag;
    }
    first = end;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// PieceOp
//===----------------------------------------------------------------------===//

LogicalResult PieceOp::verify() {
  size_t rank = getSizes().size();
  if (getDstOffset().size() != rank || getSrcOffset().size() != rank)
    return emitOpError() << "has offsets of another rank than its box";
  for (int64_t s : getSizes())
    if (s <= 0)
      return emitOpError() << "has an empty box";
  for (ArrayRef<int64_t> offsets : {getDstOffset(), getSrcOffset()})
    for (int64_t o : offsets)
      if (o < 0)
        return emitOpError() << "has a negative offset";
  // I64Attr getters are unsigned: compare the stored integers.
  if (getDstComboAttr().getInt() < 0 || getSrcComboAttr().getInt() < 0)
    return emitOpError() << "names a negative combo";
  return success();
}

//===----------------------------------------------------------------------===//
// ItemsOp
//===----------------------------------------------------------------------===//

ParseResult ItemsOp::parse(OpAsmParser &parser, OperationState &result) {
  int64_t index;
  if (parser.parseInteger(index))
    return failure();
  SmallVector<int64_t> rows;
  if (parser.parseCommaSeparatedList(
          OpAsmParser::Delimiter::Square, [&]() -> ParseResult {
            SMLoc loc = parser.getCurrentLocation();
            StringRef name;
            if (parser.parseKeyword(&name))
              return failure();
            // gG.pP
            auto [g, piece] = name.split('.');
            int64_t group, p;
            if (!g.consume_front("g") || !piece.consume_front("p") ||
                g.getAsInteger(10, group) || piece.getAsInteger(10, p))
              return parser.emitError(loc)
                     << "expected an item gG.pP[...], got '" << name << "'";
            int64_t start, stride = 1, count = 1;
            if (parser.parseLSquare() || parser.parseInteger(start))
              return failure();
            if (succeeded(parser.parseOptionalKeyword("by")) &&
                parser.parseInteger(stride))
              return failure();
            if (succeeded(parser.parseOptionalKeyword("x")) &&
                parser.parseInteger(count))
              return failure();
            if (parser.parseRSquare())
              return failure();
            rows.append({group, p, start, stride, count});
            return success();
          }))
    return failure();
  Builder &b = parser.getBuilder();
  result.addAttribute("index", b.getI64IntegerAttr(index));
  result.addAttribute("rows", b.getDenseI64ArrayAttr(rows));
  return parser.parseOptionalAttrDict(result.attributes);
}

void ItemsOp::print(OpAsmPrinter &p) {
  p << " " << getIndex() << " [";
  ArrayRef<int64_t> rows = getRows();
  for (size_t i = 0; i + 5 <= rows.size(); i += 5) {
    p << (i ? ", " : "") << "g" << rows[i] << ".p" << rows[i + 1] << "["
      << rows[i + 2];
    if (rows[i + 3] != 1)
      p << " by " << rows[i + 3];
    if (rows[i + 4] != 1)
      p << " x " << rows[i + 4];
    p << "]";
  }
  p << "]";
  p.printOptionalAttrDict((*this)->getAttrs(), {"index", "rows"});
}

LogicalResult ItemsOp::verify() {
  ArrayRef<int64_t> rows = getRows();
  if (rows.size() % 5)
    return emitOpError() << "holds " << rows.size()
                         << " integers, not rows of 5";
  for (size_t i = 0; i < rows.size(); i += 5) {
    if (rows[i] < 0 || rows[i + 1] < 0 || rows[i + 2] < 0)
      return emitOpError() << "item " << i / 5
                           << " names a negative group, piece or member";
    if (rows[i + 3] < 1 || rows[i + 4] < 1)
      return emitOpError() << "item " << i / 5
                           << " needs a positive stride and count";
    std::optional<int64_t> last = llvm::checkedMul(rows[i + 3], rows[i + 4]);
    if (!last || *last > INT32_MAX || rows[i + 2] > INT32_MAX)
      return emitOpError() << "item " << i / 5 << " reaches past member 2^31";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// RankOp, SendOp, RecvOp
//===----------------------------------------------------------------------===//

template <class StreamOp> static LogicalResult verifyStream(StreamOp op) {
  // I64Attr getters are unsigned: read the stored integers.
  int64_t phase = op.getPhaseAttr().getInt(), peer = op.getPeerAttr().getInt(),
          bytes = op.getBytesAttr().getInt(),
          quota = op.getQuotaAttr().getInt(),
          start = op.getStartAttr().getInt();
  int64_t lane = phase >= engine::kTransitOut  ? phase - engine::kTransitOut
                 : phase >= engine::kTransitIn ? phase - engine::kTransitIn
                                               : phase - 1;
  if (phase < 0 || lane >= std::numeric_limits<int32_t>::max())
    return op.emitOpError()
           << "phase " << phase
           << " must be 0 (from source shards), a relay lane 1 + r, or a "
              "transit's 2^31 + r (into it) or 2^32 + r (out of it), r a rank";
  if (peer < 0)
    return op.emitOpError() << "names a negative peer";
  if (bytes < 1 || quota < 1 || start < 0)
    return op.emitOpError() << "needs positive bytes and quota and a start "
                               "of at least 0";
  int64_t steps = bytes / quota + (bytes % quota != 0);
  if (start > kMaxRankSteps || steps > kMaxRankSteps - start)
    return op.emitOpError() << "runs past step " << kMaxRankSteps
                            << ", the most a rank's program takes";
  return success();
}

LogicalResult SendOp::verify() { return verifyStream(*this); }
LogicalResult RecvOp::verify() { return verifyStream(*this); }

LogicalResult RankOp::verifyRegions() {
  int64_t rank = getRankAttr().getInt();
  std::pair<int64_t, int64_t> lastSend{-1, -1}, lastRecv{-1, -1};
  bool sawStream = false, sawRecv = false, sawCopy = false;
  for (Operation &op : getBody().front()) {
    if (auto copy = dyn_cast<CopyOp>(op)) {
      if (sawStream || sawCopy)
        return copy.emitOpError() << "must come first, once per rank";
      sawCopy = true;
      continue;
    }
    auto check = [&](auto stream, std::pair<int64_t, int64_t> &last,
                     const char *what) -> LogicalResult {
      if (stream.getPeerAttr().getInt() == rank)
        return stream.emitOpError() << "names its own rank; a rank copies "
                                       "locally with reshard_rt.copy";
      std::pair<int64_t, int64_t> key{stream.getPeerAttr().getInt(),
                                      stream.getPhaseAttr().getInt()};
      if (key <= last)
        return stream.emitOpError()
               << "comes out of order; a rank's " << what
               << " are ordered by (peer, phase), one stream each";
      last = key;
      return success();
    };
    if (auto send = dyn_cast<SendOp>(op)) {
      if (sawRecv)
        return send.emitOpError() << "follows a receive; sends come first";
      sawStream = true;
      if (failed(check(send, lastSend, "sends")))
        return failure();
    } else if (auto recv = dyn_cast<RecvOp>(op)) {
      sawStream = sawRecv = true;
      if (failed(check(recv, lastRecv, "receives")))
        return failure();
    } else {
      return op.emitOpError() << "is not part of a rank program";
    }
  }
  if (getWorkspaceAttr().getInt() < 0)
    return emitOpError() << "has a negative workspace";
  return success();
}

//===----------------------------------------------------------------------===//
// PlanOp
//===----------------------------------------------------------------------===//

LogicalResult PlanOp::verifyRegions() {
  std::unique_ptr<EncodedPlan> encoded = EncodedPlan::encode(*this);
  if (!encoded)
    return failure();
  return checkPlan(*encoded);
}
