//===- InputFiles.h - Telling inputs apart, parsing them safely -*- C++ -*-===//
//
// Every tool takes reshard IR, and those that accept layouts the layout
// JSON too: the input is classified by its name or first character. MLIR's
// parser recurses once per nested bracket (and per operator of an affine
// expression, and its printer once per alias use) with no depth limit, so
// a hostile file of a million '[' would overflow the stack. No reshard
// program nests deeper than a handful of levels: deeper input is refused
// with a diagnostic before parsing.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_SUPPORT_INPUTFILES_H
#define RESHARD_SUPPORT_INPUTFILES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>

namespace llvm {
class MemoryBuffer;
class SourceMgr;
} // namespace llvm

namespace reshard {

/// Deepest nesting the tools accept in MLIR text: brackets, and attribute
/// and type aliases, each use of which nests its definition.
inline constexpr unsigned kMaxInputNesting = 256;
/// Longest `affine_map<...>` or `affine_set<...>` the tools accept: MLIR's
/// affine expression parser and simplifier recurse once per operator,
/// brackets or not (`- - - d0`, `d0 + d0 + ...`). No reshard program uses
/// affine maps at all.
inline constexpr size_t kMaxAffineText = 4096;

/// Where and why MLIR text would make the parser or printer recurse deeper
/// than is safe.
struct InputHazard {
  size_t offset;
  std::string why;
};

/// The first hazard of `text`, outside string literals and `//` comments:
/// `(`, `[`, `{` or `<` nested deeper than `maxDepth` (`->` is not a
/// bracket), counting an alias use as its definition's depth; or an affine
/// map or set longer than kMaxAffineText.
std::optional<InputHazard>
findExcessiveNesting(llvm::StringRef text,
                     unsigned maxDepth = kMaxInputNesting);

/// Prints `file:line:col: error: ...` to stderr and returns failure when
/// `buffer` nests too deeply to parse safely.
mlir::LogicalResult checkInputNesting(const llvm::MemoryBuffer &buffer);

/// Whether an input is the layout JSON rather than MLIR: a `.json` name, or
/// text whose first non-blank character is `{` (MLIR never starts so, save
/// `{-#` metadata).
bool isLayoutJSON(llvm::StringRef path, llvm::StringRef contents);

/// The main buffer of `sourceMgr` parsed as an MLIR module after the
/// nesting check. Null after an error, which has been reported.
mlir::OwningOpRef<mlir::ModuleOp>
parseModuleWithLimits(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                      mlir::MLIRContext *context);

} // namespace reshard

#endif // RESHARD_SUPPORT_INPUTFILES_H
