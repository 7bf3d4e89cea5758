//===- FuzzJSON.cpp - libFuzzer target: the layout interchange JSON -------===//
//
// Bytes go to reshard::importLayoutJSON as a file's contents would. Nothing
// may crash, and an accepted file must yield a module that prints and
// parses back (what `reshard-translate --import-layout-json | reshard-opt`
// does): the importer's checks and the verifier's must agree.
//
//===----------------------------------------------------------------------===//
#include "FuzzContext.h"
#include "reshard/InitAll.h"
#include "reshard/Target/LayoutJSON/ImportLayoutJSON.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>

using namespace mlir;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &ctx = fuzzContext();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return success();
  });
  // Not null-terminated, unlike a file's buffer: the reader works on
  // lengths, and AddressSanitizer sees any read past the last byte.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBuffer(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.json", /*RequiresNullTerminator=*/false),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module = reshard::importLayoutJSON(sourceMgr, &ctx);
  if (!module)
    return 0;

  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  diagnostics.clear();
  // parseSourceString copies nothing and the lexer needs the terminator
  // that std::string provides.
  OwningOpRef<ModuleOp> again = parseSourceString<ModuleOp>(printed, &ctx);
  if (!again) {
    std::fprintf(stderr,
                 "reshard-fuzz-json: the imported module does not parse "
                 "back\n--- printed module:\n%s\n--- diagnostics:\n%s\n",
                 printed.c_str(), diagnostics.c_str());
    std::abort();
  }
  return 0;
}
