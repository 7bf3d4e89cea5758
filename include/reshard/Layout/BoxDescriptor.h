//===- BoxDescriptor.h - Boxes of a shard as strided byte loops -*- C++ -*-===//
//
// The descriptors the execution engine walks (their format is
// include/reshard/ExecutionEngine/PlanTables.h's), derived from a box of a
// dense row-major shard. The lowering writes them and the reshard_rt
// verifier derives them again to check what it is given.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_BOXDESCRIPTOR_H
#define RESHARD_LAYOUT_BOXDESCRIPTOR_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>

namespace reshard {

/// offset, run, n, (count, stride) x n: box `sizes` at `offset` of a shard
/// of `shape` (extents by logical dim) that stores its dims in `dimOrder`
/// (empty: row-major), with elements of `elementBytes`. The loops follow
/// the logical dims; inner dims that continue the run merge into it, loops
/// of count 1 are dropped and a loop whose stride is the next loop's span
/// merges into it. The shard's bytes must fit in 64 bits.
llvm::SmallVector<int64_t> boxDescriptor(llvm::ArrayRef<int64_t> shape,
                                         llvm::ArrayRef<int64_t> dimOrder,
                                         llvm::ArrayRef<int64_t> offset,
                                         llvm::ArrayRef<int64_t> sizes,
                                         int64_t elementBytes);

/// src offset, dst offset, run, n, (count, src stride, dst stride) x n:
/// the same box in two shards at once, merged where both allow.
llvm::SmallVector<int64_t> copyDescriptor(
    llvm::ArrayRef<int64_t> srcShape, llvm::ArrayRef<int64_t> srcDimOrder,
    llvm::ArrayRef<int64_t> srcOffset, llvm::ArrayRef<int64_t> dstShape,
    llvm::ArrayRef<int64_t> dstDimOrder, llvm::ArrayRef<int64_t> dstOffset,
    llvm::ArrayRef<int64_t> sizes, int64_t elementBytes);

} // namespace reshard

#endif // RESHARD_LAYOUT_BOXDESCRIPTOR_H
