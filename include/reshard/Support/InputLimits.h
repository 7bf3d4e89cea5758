//===- InputLimits.h - Reject inputs that would exhaust the stack -*- C++
//-*-===//
//
// MLIR's parser recurses once per nested bracket and has no depth limit, so
// a hostile file of a million '[' overflows the stack. No reshard program
// nests deeper than a handful of levels: the tools refuse deeper input with
// a diagnostic before parsing.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_SUPPORT_INPUTLIMITS_H
#define RESHARD_SUPPORT_INPUTLIMITS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <optional>

namespace llvm {
class MemoryBuffer;
} // namespace llvm

namespace reshard {

/// Deepest bracket nesting the tools accept in MLIR text.
inline constexpr unsigned kMaxInputNesting = 256;

/// The byte offset at which `text` first nests `(`, `[`, `{` or `<` deeper
/// than `maxDepth` (outside string literals and `//` comments; `->` is not a
/// bracket), or std::nullopt.
std::optional<size_t>
findExcessiveNesting(llvm::StringRef text,
                     unsigned maxDepth = kMaxInputNesting);

/// Prints `file:line:col: error: ...` to stderr and returns failure when
/// `buffer` nests too deeply to parse safely.
mlir::LogicalResult checkInputNesting(const llvm::MemoryBuffer &buffer);

} // namespace reshard

#endif // RESHARD_SUPPORT_INPUTLIMITS_H
