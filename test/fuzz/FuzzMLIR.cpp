//===- FuzzMLIR.cpp - libFuzzer target: parse, verify, print, parse back --===//
//
// Bytes are read as a .mlir file with the reshard dialects registered, the
// way reshard-opt reads one: the nesting limit first (MLIR's parser recurses
// without bound), then the parser, then the verifier. Nothing may crash. A
// module that verifies must also print, and its printed form must parse,
// verify and print again to the same text: the tools hand IR to each other
// as text (`reshard-opt | reshard-opt`), so a verified op that does not
// survive that is a bug too, and aborts.
//
//===----------------------------------------------------------------------===//
#include "FuzzContext.h"
#include "reshard/InitAll.h"
#include "reshard/Support/InputFiles.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace mlir;

namespace {

/// The parsed, verified module of `text`, or null. Diagnostics are
/// formatted (their arguments print, which is code under test too) and
/// dropped.
OwningOpRef<ModuleOp> parseAndVerify(MLIRContext &ctx, llvm::StringRef text,
                                     llvm::StringRef name,
                                     std::string &diagnostics) {
  if (reshard::findExcessiveNesting(text))
    return nullptr;
  // The tools read files into null-terminated buffers; MLIR's lexer relies
  // on the terminator, so the fuzzer's bytes are copied into one.
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    for (Diagnostic &note : diag.getNotes())
      diagnostics += "  note: " + note.str() + "\n";
    return success();
  });
  ParserConfig config(&ctx, /*verifyAfterParse=*/false);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, config);
  if (!module || failed(verify(*module)))
    return nullptr;
  return module;
}

std::string print(ModuleOp module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os);
  return text;
}

[[noreturn]] void fail(const char *what, const std::string &printed,
                       const std::string &detail) {
  std::fprintf(stderr,
               "reshard-fuzz-mlir: %s\n--- printed module:\n%s\n---\n%s\n",
               what, printed.c_str(), detail.c_str());
  std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = fuzzContext();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  std::string diagnostics;
  OwningOpRef<ModuleOp> module =
      parseAndVerify(ctx, text, "fuzz.mlir", diagnostics);
  if (!module)
    return 0;
  std::string printed = print(*module);
  diagnostics.clear();
  OwningOpRef<ModuleOp> again =
      parseAndVerify(ctx, printed, "printed.mlir", diagnostics);
  if (!again)
    fail("a verified module prints as text that does not parse and verify",
         printed, "--- diagnostics:\n" + diagnostics);
  std::string reprinted = print(*again);
  if (reprinted != printed)
    fail("printing is not stable across a parse", printed,
         "--- printed again:\n" + reprinted);
  return 0;
}
