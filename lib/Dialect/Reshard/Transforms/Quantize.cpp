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

/// The `#reshard.sharding` of a resolved, unquantized sharding on `mesh`.
ShardingAttr shardingAttr(MLIRContext *ctx, const Sharding &sharding,
                          const MeshSpec &mesh) {
  SmallVector<DimShardingAttr> dims;
  for (const DimSharding &d : sharding.dims) {
    SmallVector<StringAttr> axes;
    for (unsigned a : d.axes)
      axes.push_back(StringAttr::get(ctx, mesh.axes[a]));
    SmallVector<int64_t> order;
    for (const OrderRun &r : d.order)
      order.append({r.start, r.length});
    dims.push_back(DimShardingAttr::get(ctx, axes, d.blocks, order));
  }
  return ShardingAttr::get(ctx, dims);
}

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
      const QuantSpec &quant = sides->dst.sharding.quant;
      SmallVector<int64_t> blocks = quant.blockSizes(sides->shape.size());
      Sharding dstPayload = sides->dst.sharding;
      dstPayload.quant = QuantSpec();
      // Senders quantize when each holds whole blocks; else receivers do,
      // which always hold whole blocks (the verifier's alignment rule).
      std::optional<Sharding> srcScales;
      if (!checkWholeBlocks(sides->src.sharding, sides->src.mesh.shape,
                            sides->src.mesh.axes, sides->shape, blocks))
        srcScales = scaleSharding(sides->src.sharding, sides->shape, blocks);
      bool sender = srcScales.has_value();
      std::optional<Sharding> dstScales =
          scaleSharding(dstPayload, sides->shape, blocks);
      std::optional<std::string> why =
          sender ? std::nullopt
                 : checkWholeBlocks(dstPayload, sides->dst.mesh.shape,
                                    sides->dst.mesh.axes, sides->shape, blocks);
      if (!dstScales || why) {
        op.emitOpError() << "@" << op.getSymName()
                         << ": no side holds whole quantization blocks ("
                         << (why ? *why
                                 : std::string("the destination's scales "
                                               "have no sharding"))
                         << ")";
        return signalPassFailure();
      }
      if (!sender)
        srcScales = dstScales;
      SmallVector<int64_t> scaleShape;
      for (auto [n, b] : llvm::zip(sides->shape, blocks))
        scaleShape.push_back(llvm::divideCeilSigned(n, b));
      Type element = quant.kind == QuantSpec::Mx
                         ? Type(IntegerType::get(ctx, 8, IntegerType::Unsigned))
                         : Type(Float32Type::get(ctx));
      auto type = RankedTensorType::get(scaleShape, element);
      OpBuilder b(op);
      b.setInsertionPointAfter(op);
      // Scales quantized on receipt stay where they are made: an identity
      // on the destination mesh, which moves nothing.
      auto scales = RedistributeOp::create(
          b, op.getLoc(), (op.getSymName() + kScaleSuffix).str(),
          sender ? op.getSrcMesh() : op.getDstMesh(),
          shardingAttr(ctx, *srcScales,
                       sender ? sides->src.mesh : sides->dst.mesh),
          op.getDstMesh(), shardingAttr(ctx, *dstScales, sides->dst.mesh), type,
          type, op.getTopologyAttr());
      scales->setAttr(kScalesOfAttr,
                      FlatSymbolRefAttr::get(op.getSymNameAttr()));
      op->setAttr(kQuantizeOnAttr,
                  StringAttr::get(ctx, sender ? kQuantizeOnSender
                                              : kQuantizeOnReceiver));
    }
  }
};

} // namespace
