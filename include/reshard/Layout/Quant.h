//===- Quant.h - Quantized destinations: blocks and alignment ---*- C++ -*-===//
//
// Checks of docs/Layout.md "Quantized destinations" that need the mesh: a
// side holds whole quantization blocks only if every shard boundary along a
// blocked dim is a multiple of that dim's block size (or the dim's end).
// The verifier asks it of destinations; the planner asks it of sources to
// decide whether senders can quantize.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_QUANT_H
#define RESHARD_LAYOUT_QUANT_H

#include "reshard/Layout/Layout.h"

namespace reshard {

/// The first shard boundary of a side that is not a multiple of its dim's
/// block size: a block boundary (`coords` empty) or a chunk's boundary
/// (the chunk [chunk[0], chunk[1]) of block `block` at `coords` on the
/// dim's axes).
struct MisalignedBoundary {
  size_t dim = 0, block = 0;
  int64_t boundary = 0;
  llvm::SmallVector<int64_t, 4> coords;
  llvm::SmallVector<int64_t, 2> chunk;
  /// The start of fused block `block` itself, not a chunk inside one.
  bool isBlockStart() const { return chunk.empty() && coords.empty(); }
};

/// The first misaligned boundary of `sharding` (resolved) on a mesh of
/// `meshShape` for a tensor of `shape` cut into blocks of `blockSizes`, or
/// std::nullopt when every device holds whole blocks.
std::optional<MisalignedBoundary> findMisalignedBoundary(
    const Sharding &sharding, llvm::ArrayRef<int64_t> meshShape,
    llvm::ArrayRef<int64_t> shape, llvm::ArrayRef<int64_t> blockSizes);

/// A sentence for a misaligned boundary, naming the dim, the boundary, the
/// chunk and the device coordinates (by the mesh's axis names).
std::string describeMisalignment(const MisalignedBoundary &m,
                                 const Sharding &sharding,
                                 llvm::ArrayRef<std::string> axes,
                                 llvm::ArrayRef<int64_t> shape,
                                 int64_t blockSize);

/// Checks a quantized destination side (`sharding.quant` not empty; nothing
/// to check otherwise) against its mesh and the tensor's shape and dtype: a
/// bf16, fp16 or fp32 tensor, and every shard boundary along a blocked dim
/// a multiple of its block size, except at the dim's end. Errors are at
/// `path.quant` or `path.dims[d]`.
llvm::Error verifyQuantizedSide(const Sharding &sharding,
                                llvm::ArrayRef<int64_t> meshShape,
                                llvm::ArrayRef<std::string> axes,
                                llvm::ArrayRef<int64_t> shape,
                                llvm::StringRef dtype, const std::string &path);

/// The sharding of the scale tensor of a side quantized in `blocks`: every
/// dim size, fused block size and storage order run divided by the dim's
/// block size, rounding up; std::nullopt when a fused block or an order run
/// does not start on a block (or is cut short before the dim's end).
std::optional<Sharding> scaleSharding(const Sharding &sharding,
                                      llvm::ArrayRef<int64_t> shape,
                                      llvm::ArrayRef<int64_t> blocks);

/// Whether every device of a side (`sharding` on a mesh of `meshShape` with
/// axis names `axes`) holds whole blocks, and its scale shard under
/// scaleSharding holds exactly the scales of those blocks in their local
/// order: std::nullopt if so, else a sentence naming a device and the
/// indices it holds. Checked per dim over the coordinates of the dim's axes.
std::optional<std::string> checkWholeBlocks(const Sharding &sharding,
                                            llvm::ArrayRef<int64_t> meshShape,
                                            llvm::ArrayRef<std::string> axes,
                                            llvm::ArrayRef<int64_t> shape,
                                            llvm::ArrayRef<int64_t> blocks);

/// The engine's input type code (engine::QuantInput) of a dtype a quantized
/// tensor may have: fp32, bf16 or fp16.
std::optional<int> quantInputType(llvm::StringRef dtype);

} // namespace reshard

#endif // RESHARD_LAYOUT_QUANT_H
