//===- LayoutInterop.h - Plain layout data from the ops ---------*- C++ -*-===//
//
// The planner and the reference executors work on plain data
// (reshard/Layout); these functions build it from the ops, and report the
// shared layout checks' findings as diagnostics at the ops.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_DIALECT_RESHARD_IR_LAYOUTINTEROP_H
#define RESHARD_DIALECT_RESHARD_IR_LAYOUTINTEROP_H

#include "reshard/Dialect/Reshard/IR/ReshardOps.h"
#include "reshard/Layout/TensorLayout.h"

#include "llvm/ADT/StringMap.h"

namespace reshard {

/// Reports every LayoutError of `err` as an error of `op`
/// (`path: message`). Succeeds when there was none.
mlir::LogicalResult emitLayoutErrors(mlir::Operation *op, llvm::Error err);

/// Where reshard-quantize decided a quantized destination is quantized
/// (`quantize_on = "sender"` or `"receiver"` on the redistribution), and
/// the mark of the scales' own redistribution (`scales_of = @<tensor>`),
/// named `<tensor>.scale`.
inline constexpr llvm::StringLiteral kQuantizeOnAttr = "quantize_on";
inline constexpr llvm::StringLiteral kQuantizeOnSender = "sender";
inline constexpr llvm::StringLiteral kQuantizeOnReceiver = "receiver";
inline constexpr llvm::StringLiteral kScalesOfAttr = "scales_of";
inline constexpr llvm::StringLiteral kScaleSuffix = ".scale";

/// Whether `op` is a payload quantized on its senders, so that it moves
/// one byte per element (on its receivers it moves at full precision).
bool isQuantizedOnSender(RedistributeOp op);

/// Whether `op` is a payload quantized on its receivers.
bool isQuantizedOnReceiver(RedistributeOp op);

/// Both sides of `op` resolved, its global shape, and its dtype name.
struct TensorSides {
  llvm::SmallVector<int64_t> shape;
  SideLayout src, dst;
};

/// The sides of `op` with meshes resolved through `symbols`; fails with a
/// diagnostic at `op` when a mesh is missing or a sharding does not
/// resolve.
mlir::FailureOr<TensorSides>
getTensorSides(RedistributeOp op, mlir::SymbolTableCollection &symbols);

/// The `#reshard.sharding` of a resolved sharding without quantization on
/// `mesh` (its axis names).
ShardingAttr getShardingAttr(mlir::MLIRContext *ctx, const Sharding &sharding,
                             const MeshSpec &mesh);

/// The scales' redistribution of a quantized destination, as
/// reshard-quantize makes it: its tensor type (fp32 scales, or ui8 E8M0
/// bytes for MX; the tensor's shape divided by the block sizes, rounding
/// up) and its shardings. Quantized on the senders, the scales start
/// sharded like the payload's source, on the source mesh; on the
/// receivers, they stay on the destination mesh as they land.
struct QuantScales {
  mlir::RankedTensorType type;
  Sharding src, dst;
  bool startOnDst = false;
};

/// The scales of quantized `op` (sides resolved) when `senders` (or else
/// its receivers) quantize it, into `out`; std::nullopt if so, else a
/// sentence saying why that side does not hold whole blocks.
std::optional<std::string> getQuantScales(RedistributeOp op,
                                          const TensorSides &sides,
                                          bool senders, QuantScales &out);

/// Checks what reshard-quantize decided of `op`, as a module may state it
/// (`quantize_on` on a quantized payload, `scales_of` on its scales):
/// senders quantize only where they hold whole blocks, and the scales'
/// redistribution is the one getQuantScales makes, named `<tensor>.scale`.
mlir::LogicalResult verifyQuantDecision(RedistributeOp op,
                                        mlir::SymbolTableCollection &symbols);

/// The plain-data layout of `op` (its meshes resolved through `symbols`),
/// for the planner and the interpreter. Fails with a diagnostic at `op`
/// when a mesh is missing or the op does not verify. A quantized
/// destination that reshard-quantize decided to quantize on the sender
/// moves its payload: one byte per element.
mlir::FailureOr<TensorLayout>
getTensorLayout(RedistributeOp op, mlir::SymbolTableCollection &symbols);

/// The reshard.pieces op of every planned tensor, by tensor name. A tensor
/// with two tables is an error, reported at the second.
mlir::FailureOr<llvm::StringMap<PiecesOp>> collectPieces(mlir::ModuleOp module);

} // namespace reshard

#endif // RESHARD_DIALECT_RESHARD_IR_LAYOUTINTEROP_H
