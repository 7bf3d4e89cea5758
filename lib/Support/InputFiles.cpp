//===- InputFiles.cpp - Input classification and the nesting scan -------===//
#include "reshard/Support/InputFiles.h"

#include "mlir/Parser/Parser.h"

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

bool reshard::isLayoutJSON(llvm::StringRef path, llvm::StringRef contents) {
  if (path.ends_with(".json"))
    return true;
  llvm::StringRef text = contents.ltrim(" \t\r\n");
  if (text.starts_with("\xEF\xBB\xBF")) // a UTF-8 byte order mark
    text = text.drop_front(3).ltrim(" \t\r\n");
  return text.starts_with("{") && !text.starts_with("{-#");
}

mlir::OwningOpRef<mlir::ModuleOp> reshard::parseModuleWithLimits(
    const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
    mlir::MLIRContext *context) {
  const llvm::MemoryBuffer *buf =
      sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
  if (mlir::failed(checkInputNesting(*buf)))
    return nullptr;
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, context);
}
