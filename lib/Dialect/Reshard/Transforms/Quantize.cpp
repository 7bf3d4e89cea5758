//===- Quantize.cpp - The reshard-quantize pass ---------------------------===//
//
// Quantized destinations become payload and scales that the planner moves
// like any other tensors: the payload keeps its op (one byte per element on
// the wire when its senders quantize it, full precision when its receivers
// do), the scales get a redistribution of their own.
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Layout/Quant.h"

#include "mlir/IR/Builders.h"

namespace reshard {
#define GEN_PASS_DEF_RESHARDQUANTIZE
#include "reshard/Dialect/Reshard/Transforms/Passes.h.inc"
} // namespace reshard

using namespace mlir;
using namespace reshard;

namespace {

struct QuantizePass : public reshard::impl::ReshardQuantizeBase<QuantizePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SymbolTableCollection symbols;
    for (RedistributeOp op :
         llvm::make_early_inc_range(module.getOps<RedistributeOp>())) {
      if (!op.getDstSharding().isQuantized() || op->hasAttr(kQuantizeOnAttr))
        continue;
      FailureOr<TensorSides> sides = getTensorSides(op, symbols);
      if (failed(sides))
        return signalPassFailure();
      // Senders quantize when each holds whole blocks; else receivers do,
      // which always hold whole blocks (the verifier's alignment rule).
      QuantScales scales;
      bool senders = !getQuantScales(op, *sides, /*senders=*/true, scales);
      if (!senders)
        if (std::optional<std::string> why =
                getQuantScales(op, *sides, /*senders=*/false, scales)) {
          op.emitOpError() << "@" << op.getSymName()
                           << ": no side holds whole quantization blocks ("
                           << *why << ")";
          return signalPassFailure();
        }
      OpBuilder b(op);
      b.setInsertionPointAfter(op);
      // Scales quantized on receipt stay where they are made: an identity
      // on the destination mesh, which moves nothing.
      auto made = RedistributeOp::create(
          b, op.getLoc(), (op.getSymName() + kScaleSuffix).str(),
          senders ? op.getSrcMesh() : op.getDstMesh(),
          getShardingAttr(ctx, scales.src,
                          senders ? sides->src.mesh : sides->dst.mesh),
          op.getDstMesh(), getShardingAttr(ctx, scales.dst, sides->dst.mesh),
          scales.type, scales.type, op.getTopologyAttr());
      made->setAttr(kScalesOfAttr, FlatSymbolRefAttr::get(op.getSymNameAttr()));
      op->setAttr(kQuantizeOnAttr,
                  StringAttr::get(ctx, senders ? kQuantizeOnSender
                                               : kQuantizeOnReceiver));
    }
  }
};

} // namespace
