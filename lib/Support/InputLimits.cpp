//===- InputLimits.cpp - Bracket depth scan before parsing ----------------===//
#include "reshard/Support/InputLimits.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace reshard;

std::optional<size_t> reshard::findExcessiveNesting(llvm::StringRef text,
                                                    unsigned maxDepth) {
  int64_t depth = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '"') { // skip a string literal, honouring escapes
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < e && text[i + 1] == '/') {
      while (i < e && text[i] != '\n')
        ++i;
      continue;
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > maxDepth)
        return i;
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && !(i && text[i - 1] == '-'))) {
      depth = depth > 0 ? depth - 1 : 0;
    }
  }
  return std::nullopt;
}

mlir::LogicalResult reshard::checkInputNesting(const llvm::MemoryBuffer &buf) {
  std::optional<size_t> at = findExcessiveNesting(buf.getBuffer());
  if (!at)
    return mlir::success();
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buf.getMemBufferRef(), false),
      llvm::SMLoc());
  sm.PrintMessage(llvm::errs(),
                  llvm::SMLoc::getFromPointer(buf.getBufferStart() + *at),
                  llvm::SourceMgr::DK_Error,
                  "brackets nest deeper than " + llvm::Twine(kMaxInputNesting) +
                      " levels; no reshard program needs that, refusing to "
                      "parse");
  return mlir::failure();
}
