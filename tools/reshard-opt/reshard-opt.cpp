//===- reshard-opt.cpp - Parse, verify and transform reshard IR -----------===//
#include "reshard/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  reshard::registerAllDialects(registry);
  reshard::registerAllPasses();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "reshard optimizer: verify and lower redistributions\n",
      registry));
}
