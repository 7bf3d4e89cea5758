//===- reshard-translate.cpp - Between reshard IR and other formats -------===//
#include "reshard/InitAll.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  reshard::registerAllTranslations();
  return mlir::failed(
      mlir::mlirTranslateMain(argc, argv, "reshard translation tool\n"));
}
