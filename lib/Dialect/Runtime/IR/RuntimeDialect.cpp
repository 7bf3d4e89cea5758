//===- RuntimeDialect.cpp - The reshard_rt dialect ------------------------===//
#include "reshard/Dialect/Runtime/IR/RuntimeDialect.h"
#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"

using namespace mlir;
using namespace reshard::rt;

#include "reshard/Dialect/Runtime/IR/RuntimeDialect.cpp.inc"

void RuntimeDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "reshard/Dialect/Runtime/IR/RuntimeOps.cpp.inc"
      >();
}
