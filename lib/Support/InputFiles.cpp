//===- InputFiles.cpp - Input classification and the nesting scan -------===//
#include "reshard/Support/InputFiles.h"

#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace reshard;

static bool isIdStart(char c) { return llvm::isAlpha(c) || c == '_'; }
static bool isIdChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.' || c == '-';
}

std::optional<InputHazard> reshard::findExcessiveNesting(llvm::StringRef text,
                                                         unsigned maxDepth) {
  int64_t depth = 0;
  // Alias definitions (`#name = ...`, `!name = ...` at the top level) and
  // how deep each nests; the one being read, if any.
  llvm::StringMap<int64_t> aliasDepth;
  std::string defining;
  int64_t definingDepth = 0;
  auto tooDeep = [&](size_t at, bool alias) {
    return InputHazard{at, "brackets nest deeper than " +
                               std::to_string(maxDepth) + " levels" +
                               (alias ? " (an alias use counts as its "
                                        "definition's nesting)"
                                      : "") +
                               "; no reshard program needs that, refusing "
                               "to parse"};
  };
  bool lineStart = true;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    if (c == '\n') {
      lineStart = true;
      if (depth == 0 && !defining.empty()) {
        aliasDepth[defining] = definingDepth;
        defining.clear();
      }
      continue;
    }
    bool atLineStart = lineStart && c != ' ' && c != '\t' && c != '\r';
    if (atLineStart)
      lineStart = false;
    if (c == '"') { // skip a string literal, honouring escapes
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < e && text[i + 1] == '/') {
      while (i + 1 < e && text[i + 1] != '\n')
        ++i;
      continue;
    }
    if ((c == '#' || c == '!') && i + 1 < e && isIdStart(text[i + 1])) {
      size_t end = i + 1;
      while (end < e && isIdChar(text[end]))
        ++end;
      llvm::StringRef name = text.slice(i, end);
      size_t next = end;
      while (next < e && (text[next] == ' ' || text[next] == '\t'))
        ++next;
      if (atLineStart && depth == 0 && next < e && text[next] == '=') {
        defining = name.str(); // a definition: its depth comes from its body
        definingDepth = 0;
      } else if (auto it = aliasDepth.find(name); it != aliasDepth.end()) {
        int64_t d = depth + it->second;
        if (d > maxDepth)
          return tooDeep(i, true);
        if (!defining.empty())
          definingDepth = std::max(definingDepth, d);
      }
      i = end - 1;
      continue;
    }
    if (text.substr(i).starts_with("affine_map<") ||
        text.substr(i).starts_with("affine_set<")) {
      size_t open = i + 10, close = open;
      for (int64_t level = 0; close < e; ++close) {
        level += text[close] == '<'                             ? 1
                 : text[close] == '>' && text[close - 1] != '-' ? -1
                                                                : 0;
        if (level == 0)
          break;
      }
      if (close - i > kMaxAffineText)
        return InputHazard{
            i, "an affine map or set longer than " +
                   std::to_string(kMaxAffineText) +
                   " characters; no reshard program needs one, refusing to "
                   "parse"};
    }
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > maxDepth)
        return tooDeep(i, false);
      if (!defining.empty())
        definingDepth = std::max(definingDepth, depth);
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && !(i && text[i - 1] == '-'))) {
      depth = depth > 0 ? depth - 1 : 0;
    }
  }
  return std::nullopt;
}

mlir::LogicalResult reshard::checkInputNesting(const llvm::MemoryBuffer &buf) {
  std::optional<InputHazard> hazard = findExcessiveNesting(buf.getBuffer());
  if (!hazard)
    return mlir::success();
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(buf.getMemBufferRef(), false),
      llvm::SMLoc());
  sm.PrintMessage(
      llvm::errs(),
      llvm::SMLoc::getFromPointer(buf.getBufferStart() + hazard->offset),
      llvm::SourceMgr::DK_Error, hazard->why);
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
