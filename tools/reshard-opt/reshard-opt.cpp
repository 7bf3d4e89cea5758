//===- reshard-opt.cpp - Parse, verify and transform reshard IR -----------===//
//
// mlir-opt with the reshard dialects and passes, plus: a bracket-depth check
// before parsing (MLIR's recursive parser would overflow the stack), layout
// JSON taken as input directly (imported first), and, when reshard-report
// writes to standard output and no -o is given, the report alone there.
//
//===----------------------------------------------------------------------===//
#include "reshard/InitAll.h"
#include "reshard/Support/InputLimits.h"
#include "reshard/Target/LayoutJSON/ImportLayoutJSON.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

/// The interchange JSON in `input`, imported and printed as MLIR with its
/// locations (so later diagnostics still name JSON lines); null after an
/// error, which has been reported.
static std::unique_ptr<llvm::MemoryBuffer>
importJSON(std::unique_ptr<llvm::MemoryBuffer> input,
           mlir::DialectRegistry &registry) {
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  llvm::SourceMgr sm;
  std::string name = input->getBufferIdentifier().str();
  sm.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sm, &ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module = reshard::importLayoutJSON(sm, &ctx);
  if (!module)
    return nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  // Another name: diagnostics at JSON locations must not quote MLIR lines.
  return llvm::MemoryBuffer::getMemBufferCopy(text, name + " (imported)");
}

/// Whether a reshard-report in the command line prints to standard output:
/// then, without -o, that output is the report alone.
static bool reportToStdout(int argc, char **argv) {
  bool report = false;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "-o" || arg == "--o" || arg.starts_with("-o=") ||
        arg.starts_with("--o="))
      return false;
    if (arg.starts_with("-") && arg.contains("reshard-report") &&
        (!arg.contains("output=") || arg.contains("output=-")))
      report = true;
  }
  return report;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  reshard::registerAllDialects(registry);
  reshard::registerAllPasses();
  bool reportOnly = reportToStdout(argc, argv);
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "reshard optimizer: verify and lower redistributions\n",
      registry);
  mlir::MlirOptMainConfig config = mlir::MlirOptMainConfig::createFromCLOptions();

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFilename, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (reshard::isLayoutJSON(inputFilename, input->getBuffer())) {
    input = importJSON(std::move(input), registry);
    if (!input)
      return 1;
  } else if (mlir::failed(reshard::checkInputNesting(*input))) {
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(reportOnly ? "/dev/null" : outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
