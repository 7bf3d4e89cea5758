//===- ReshardAttrs.cpp - Sharding attribute syntax ------------------===//
//
// `#reshard.sharding<[[tp] blocks [8, 2, 2], []]>`: one bracketed list of
// axes per tensor dim, each optionally followed by its storage order and its
// blocks.
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Reshard/IR/ReshardAttrs.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace reshard;

#include "reshard/Dialect/Reshard/IR/ReshardEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "reshard/Dialect/Reshard/IR/ReshardAttrs.cpp.inc"

void ReshardDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "reshard/Dialect/Reshard/IR/ReshardAttrs.cpp.inc"
      >();
}

/// Parses `[axis, ...] (order [[start, length], ...])? (blocks [size, ...])?`.
static DimShardingAttr parseDimBody(AsmParser &parser) {
  SmallVector<StringAttr> axes;
  SmallVector<int64_t> blocks, order;
  auto parseAxis = [&]() -> ParseResult {
    std::string name;
    if (failed(parser.parseOptionalKeywordOrString(&name)))
      return parser.emitError(parser.getCurrentLocation(),
                              "expected a mesh axis name (identifier or "
                              "string)");
    axes.push_back(StringAttr::get(parser.getContext(), name));
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseAxis,
                                     " in a list of mesh axes"))
    return {};
  SMLoc orderLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("order"))) {
    auto parseRun = [&]() -> ParseResult {
      int64_t start, length;
      if (parser.parseLSquare() || parser.parseInteger(start) ||
          parser.parseComma() || parser.parseInteger(length) ||
          parser.parseRSquare())
        return failure();
      order.append({start, length});
      return success();
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseRun,
                                       " in a storage order ([start, length] "
                                       "runs)"))
      return {};
    if (order.empty()) {
      parser.emitError(orderLoc, "'order' needs at least one run (a "
                                 "zero-size dim needs no order)");
      return {};
    }
  }
  SMLoc blocksLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("blocks"))) {
    auto parseBlock = [&]() -> ParseResult {
      int64_t size;
      if (parser.parseInteger(size))
        return failure();
      blocks.push_back(size);
      return success();
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseBlock,
                                       " in a list of blocks"))
      return {};
    if (blocks.empty()) {
      parser.emitError(blocksLoc, "'blocks' needs at least one block size");
      return {};
    }
  }
  return DimShardingAttr::get(parser.getContext(), axes, blocks, order);
}

static void printDimBody(AsmPrinter &printer, DimShardingAttr dim) {
  printer << '[';
  llvm::interleaveComma(dim.getAxes(), printer, [&](StringAttr axis) {
    printer.printKeywordOrString(axis.getValue());
  });
  printer << ']';
  if (!dim.getOrder().empty()) {
    printer << " order [";
    ArrayRef<int64_t> order = dim.getOrder();
    for (size_t i = 0; i + 1 < order.size(); i += 2)
      printer << (i ? ", [" : "[") << order[i] << ", " << order[i + 1] << ']';
    printer << ']';
  }
  if (!dim.getBlocks().empty()) {
    printer << " blocks [";
    llvm::interleaveComma(dim.getBlocks(), printer);
    printer << ']';
  }
}

Attribute DimShardingAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  DimShardingAttr dim = parseDimBody(parser);
  if (!dim || parser.parseGreater())
    return {};
  return dim;
}

void DimShardingAttr::print(AsmPrinter &printer) const {
  printer << '<';
  printDimBody(printer, *this);
  printer << '>';
}

Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  SmallVector<DimShardingAttr> dims;
  auto parseDim = [&]() -> ParseResult {
    DimShardingAttr dim = parseDimBody(parser);
    if (!dim)
      return failure();
    dims.push_back(dim);
    return success();
  };
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim,
                                     " in a sharding (one list per dim)"))
    return {};
  SmallVector<int64_t> dimOrder, block;
  int64_t mx = 0;
  bool ue8m0 = false;
  SMLoc dimOrderLoc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalKeyword("dim_order"))) {
    if (parser.parseCommaSeparatedList(
            AsmParser::Delimiter::Square,
            [&]() { return parser.parseInteger(dimOrder.emplace_back()); },
            " in a dim order"))
      return {};
    // The attribute cannot tell [] from no dim order: refuse it here.
    if (dimOrder.empty() && !dims.empty()) {
      parser.emitError(dimOrderLoc)
          << "dim_order [] on a sharding of " << dims.size()
          << " dim(s); list every dim once, outermost first";
      return {};
    }
  }
  if (succeeded(parser.parseOptionalKeyword("quant"))) {
    if (succeeded(parser.parseOptionalKeyword("mx"))) {
      if (parser.parseInteger(mx))
        return {};
    } else if (parser.parseKeyword("block", " or 'mx' after 'quant'") ||
               parser.parseCommaSeparatedList(
                   AsmParser::Delimiter::Square,
                   [&]() { return parser.parseInteger(block.emplace_back()); },
                   " in quant block sizes")) {
      return {};
    } else {
      ue8m0 = succeeded(parser.parseOptionalKeyword("ue8m0"));
    }
    if (block.empty() && mx == 0) {
      parser.emitError(parser.getCurrentLocation(),
                       "quant needs block sizes or an mx block length");
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return ShardingAttr::get(parser.getContext(), dims, dimOrder, block, mx,
                           ue8m0);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getDims(), printer, [&](DimShardingAttr dim) {
    printDimBody(printer, dim);
  });
  printer << "]";
  if (!getDimOrder().empty()) {
    printer << " dim_order [";
    llvm::interleaveComma(getDimOrder(), printer);
    printer << ']';
  }
  if (!getQuantBlock().empty()) {
    printer << " quant block [";
    llvm::interleaveComma(getQuantBlock(), printer);
    printer << ']';
    if (getQuantUe8m0())
      printer << " ue8m0";
  } else if (getQuantMx() != 0) {
    printer << " quant mx " << getQuantMx();
  }
  printer << ">";
}

ShardingSpec ShardingAttr::toSpec() const {
  ShardingSpec spec;
  for (DimShardingAttr dim : getDims()) {
    DimShardingSpec d;
    for (StringAttr axis : dim.getAxes())
      d.axes.push_back(axis.str());
    d.blocks.assign(dim.getBlocks().begin(), dim.getBlocks().end());
    ArrayRef<int64_t> order = dim.getOrder();
    for (size_t i = 0; i + 1 < order.size(); i += 2)
      d.order.push_back({order[i], order[i + 1]});
    spec.dims.push_back(std::move(d));
  }
  spec.dimOrder.assign(getDimOrder().begin(), getDimOrder().end());
  if (!getQuantBlock().empty()) {
    spec.quant.kind = QuantSpec::Block;
    spec.quant.block.assign(getQuantBlock().begin(), getQuantBlock().end());
    spec.quant.ue8m0 = getQuantUe8m0();
  } else if (getQuantMx() != 0) {
    spec.quant.kind = QuantSpec::Mx;
    spec.quant.mx = getQuantMx();
  }
  return spec;
}
