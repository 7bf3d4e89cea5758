//===- reshard-opt.cpp - Parse, verify and transform reshard IR -----------===//
//
// mlir-opt with the reshard dialects, passes and reshard-plan-pipeline; it
// runs exactly the passes it is given. Plus: a bracket-depth check before
// parsing (MLIR's recursive parser would overflow the stack), layout JSON
// taken as an input format (imported first), and, when a reshard-report
// wrote to standard output and the IR would go there too (no -o FILE), the
// report alone there.
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/InitAll.h"
#include "reshard/Support/InputFiles.h"
#include "reshard/Target/LayoutJSON/ImportLayoutJSON.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
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
  mlir::OwningOpRef<mlir::ModuleOp> module =
      reshard::importLayoutJSON(sm, &ctx);
  if (!module)
    return nullptr;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, mlir::OpPrintingFlags().enableDebugInfo());
  // Another name: diagnostics at JSON locations must not quote MLIR lines.
  return llvm::MemoryBuffer::getMemBufferCopy(text, name + " (imported)");
}

namespace {
/// Notes whether a reshard-report ran that wrote to standard output.
struct StdoutReportWatch : public mlir::PassInstrumentation {
  explicit StdoutReportWatch(bool &seen) : seen(seen) {}
  void runBeforePass(mlir::Pass *pass, mlir::Operation *) override {
    if (reshard::isReportToStdout(*pass))
      seen = true;
  }
  bool &seen;
};
} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::DialectRegistry registry;
  reshard::registerAllDialects(registry);
  reshard::registerAllPasses();
  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "reshard optimizer: verify and lower redistributions\n",
      registry);
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // The passes named on the command line, then a watch on what they print.
  bool reportOnStdout = false;
  mlir::MlirOptMainConfig named = config;
  config.setPassPipelineSetupFn([&](mlir::PassManager &pm) {
    if (mlir::failed(named.setupPassPipeline(pm)))
      return mlir::failure();
    pm.addInstrumentation(std::make_unique<StdoutReportWatch>(reportOnStdout));
    return mlir::success();
  });

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
  // To standard output, the IR waits until the passes have run: if a
  // reshard-report printed there, the report stands alone.
  std::string buffered;
  llvm::raw_string_ostream bufferedOS(buffered);
  bool toStdout = outputFilename == "-";
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFilename, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  llvm::raw_ostream &irOS =
      toStdout ? static_cast<llvm::raw_ostream &>(bufferedOS) : output->os();
  bool ok = mlir::succeeded(
      mlir::MlirOptMain(irOS, std::move(input), registry, config));
  if (toStdout && !reportOnStdout)
    output->os() << buffered;
  if (!ok)
    return 1; // a file named by -o is removed, as mlir-opt does
  output->keep();
  return 0;
}
