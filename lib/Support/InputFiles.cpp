//===- InputFiles.cpp - Input classification and the nesting scan -------===//
#include "reshard/Support/InputFiles.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace reshard;

/// Characters of an alias name after its `#` or `!` (MLIR's suffix-id).
static bool isSuffixIdChar(char c) {
  return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.' || c == '-';
}
static bool isIdChar(char c) { return llvm::isAlnum(c) || c == '_'; }

std::optional<InputHazard> reshard::findExcessiveNesting(llvm::StringRef text,
                                                         unsigned maxDepth) {
  int64_t depth = 0;
  // How deep each alias definition nests. The definition being read runs
  // from its `=` to the first line end at depth 0 after its value began,
  // or to the next definition.
  llvm::StringMap<int64_t> aliasDepth;
  std::string defining;
  bool valueBegun = false;
  auto define = [&](int64_t d) {
    if (!defining.empty())
      aliasDepth[defining] = std::max(aliasDepth[defining], d);
  };
  // The affine maps and sets open: where each starts and at what depth.
  llvm::SmallVector<std::pair<size_t, int64_t>> affine;
  auto tooDeep = [&](size_t at, bool alias) {
    return InputHazard{at, "brackets nest deeper than " +
                               std::to_string(maxDepth) + " levels" +
                               (alias ? " (an alias use counts as its "
                                        "definition's nesting)"
                                      : "") +
                               "; no reshard program needs that, refusing "
                               "to parse"};
  };
  auto tooLong = [&](size_t at) {
    return InputHazard{at, "an affine map or set longer than " +
                               std::to_string(kMaxAffineText) +
                               " characters; no reshard program needs one, "
                               "refusing to parse"};
  };
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    if (!affine.empty() && i - affine.back().first > kMaxAffineText)
      return tooLong(affine.back().first);
    char c = text[i];
    char next = i + 1 < e ? text[i + 1] : 0;
    if (c == '\n' && depth == 0 && valueBegun)
      defining.clear();
    if (!llvm::isSpace(c) && !defining.empty())
      valueBegun = true;
    if (c == '"') { // skip a string literal, honouring escapes
      for (++i; i < e && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && next == '/') {
      while (i + 1 < e && text[i + 1] != '\n')
        ++i;
      continue;
    }
    if ((c == '#' || c == '!') && isSuffixIdChar(next)) {
      size_t end = i + 1;
      while (end < e && isSuffixIdChar(text[end]))
        ++end;
      llvm::StringRef name = text.slice(i, end);
      size_t after = end;
      while (after < e && llvm::isSpace(text[after]))
        ++after;
      if (depth == 0 && after < e && text[after] == '=' &&
          (after + 1 == e || text[after + 1] != '=')) {
        defining = name.str(); // a definition, at the top level
        aliasDepth.try_emplace(defining, 0);
        valueBegun = false;
        i = after; // its `=`
        continue;
      } else if (auto it = aliasDepth.find(name);
                 it != aliasDepth.end() && name != defining) {
        int64_t d = depth + it->second;
        if (d > maxDepth)
          return tooDeep(i, true);
        define(d);
      }
      i = end - 1;
      continue;
    }
    if (c == 'a' && (i == 0 || !isIdChar(text[i - 1])) &&
        (text.substr(i).starts_with("affine_map") ||
         text.substr(i).starts_with("affine_set"))) {
      size_t open = i + 10;
      while (open < e && llvm::isSpace(text[open]))
        ++open;
      if (open < e && text[open] == '<') { // the keyword, then its body
        affine.push_back({i, depth});
        i = open - 1;
        continue;
      }
    }
    // `->`, `>=` and `<=` are operators, not brackets.
    if ((c == '(' || c == '[' || c == '{' || c == '<') &&
        !(c == '<' && next == '=')) {
      if (++depth > maxDepth)
        return tooDeep(i, false);
      define(depth);
    } else if ((c == ')' || c == ']' || c == '}' || c == '>') &&
               !(c == '>' && ((i && text[i - 1] == '-') || next == '='))) {
      depth = depth > 0 ? depth - 1 : 0;
      if (!affine.empty() && depth <= affine.back().second)
        affine.pop_back();
    }
  }
  if (!affine.empty() && text.size() - affine.back().first > kMaxAffineText)
    return tooLong(affine.back().first);
  return std::nullopt;
}

mlir::LogicalResult reshard::checkInputNesting(const llvm::MemoryBuffer &buf) {
  if (mlir::isBytecode(buf)) {
    llvm::WithColor::error(llvm::errs())
        << buf.getBufferIdentifier()
        << ": MLIR bytecode is not read: its nesting cannot be checked "
           "before the reader recurses through it; give the text form\n";
    return mlir::failure();
  }
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
