//===- ReshardDialect.cpp - Dialect registration and element types --------===//
#include "reshard/Dialect/Reshard/IR/ReshardDialect.h"
#include "reshard/Dialect/Reshard/IR/ReshardOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace reshard;

#include "reshard/Dialect/Reshard/IR/ReshardDialect.cpp.inc"

void ReshardDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "reshard/Dialect/Reshard/IR/ReshardOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "reshard/Dialect/Reshard/IR/ReshardPlanOps.cpp.inc"
      >();
}

std::optional<int64_t> reshard::getElementTypeBytes(Type type) {
  if (isa<BFloat16Type, Float16Type>(type))
    return 2;
  if (type.isF32())
    return 4;
  if (type.isF64())
    return 8;
  if (isa<Float8E4M3FNType, Float8E5M2Type>(type))
    return 1;
  if (auto intType = dyn_cast<IntegerType>(type)) {
    unsigned width = intType.getWidth();
    if (width == 8 || width == 16 || width == 32 || width == 64)
      return width / 8;
  }
  return std::nullopt;
}

Type reshard::getElementTypeForDtype(MLIRContext *ctx, llvm::StringRef dtype) {
  Builder b(ctx);
  auto intType = [&](unsigned width, bool isUnsigned) -> Type {
    return IntegerType::get(
        ctx, width, isUnsigned ? IntegerType::Unsigned : IntegerType::Signless);
  };
  return llvm::StringSwitch<std::function<Type()>>(dtype)
      .Case("bf16", [&] { return b.getBF16Type(); })
      .Case("fp16", [&] { return b.getF16Type(); })
      .Case("fp32", [&] { return b.getF32Type(); })
      .Case("fp64", [&] { return b.getF64Type(); })
      .Case("fp8e4m3", [&] { return Float8E4M3FNType::get(ctx); })
      .Case("fp8e5m2", [&] { return Float8E5M2Type::get(ctx); })
      .Case("int8", [&] { return intType(8, false); })
      .Case("uint8", [&] { return intType(8, true); })
      .Case("int16", [&] { return intType(16, false); })
      .Case("uint16", [&] { return intType(16, true); })
      .Case("int32", [&] { return intType(32, false); })
      .Case("uint32", [&] { return intType(32, true); })
      .Case("int64", [&] { return intType(64, false); })
      .Case("uint64", [&] { return intType(64, true); })
      .Default([] { return Type(); })();
}

llvm::StringRef reshard::getDtypeName(Type type) {
  // A redistribution moves bytes: a signed integer is its signless width.
  if (auto integer = dyn_cast<IntegerType>(type); integer && integer.isSigned())
    type = IntegerType::get(type.getContext(), integer.getWidth());
  for (llvm::StringRef name : dtypeNames())
    if (getElementTypeForDtype(type.getContext(), name) == type)
      return name;
  return "";
}
