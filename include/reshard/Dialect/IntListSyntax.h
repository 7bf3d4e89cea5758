//===- IntListSyntax.h - `[1, 2, 3]` in custom op syntax --------*- C++ -*-===//
//
// Both dialects print integer lists inline in their custom assembly; one
// spelling, shared.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_DIALECT_INTLISTSYNTAX_H
#define RESHARD_DIALECT_INTLISTSYNTAX_H

#include "mlir/IR/OpImplementation.h"

namespace reshard {

/// Parses `[v, v, ...]` (possibly empty) into `out`.
inline mlir::ParseResult parseIntList(mlir::OpAsmParser &parser,
                                      llvm::SmallVectorImpl<int64_t> &out) {
  return parser.parseCommaSeparatedList(mlir::OpAsmParser::Delimiter::Square,
                                        [&]() -> mlir::ParseResult {
                                          int64_t v;
                                          if (parser.parseInteger(v))
                                            return mlir::failure();
                                          out.push_back(v);
                                          return mlir::success();
                                        });
}

/// Prints `[v, v, ...]`.
inline void printIntList(mlir::OpAsmPrinter &p, llvm::ArrayRef<int64_t> v) {
  p << '[';
  llvm::interleaveComma(v, p);
  p << ']';
}

} // namespace reshard

#endif // RESHARD_DIALECT_INTLISTSYNTAX_H
