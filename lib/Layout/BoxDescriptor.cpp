//===- BoxDescriptor.cpp - Boxes of a shard as strided byte loops ---------===//
#include "reshard/Layout/BoxDescriptor.h"

#include "reshard/Layout/Layout.h"

#include "llvm/ADT/STLExtras.h"

using namespace llvm;
using namespace reshard;

/// Byte strides, by logical dim, of a dense buffer of `shape` that stores
/// its dims in `dimOrder`.
static SmallVector<int64_t>
byteStrides(ArrayRef<int64_t> shape, ArrayRef<int64_t> dimOrder, int64_t eb) {
  SmallVector<int64_t> strides = storedStrides(shape, dimOrder);
  for (int64_t &s : strides)
    s *= eb;
  return strides;
}

/// The byte offset of `offsets` in each buffer, the shared run, and the
/// loops, outermost first, with one stride per buffer. The loops follow the
/// logical dims whatever order a buffer stores them in, so that a pack and
/// an unpack of one box agree on the order of its bytes.
static void describe(ArrayRef<int64_t> sizes,
                     ArrayRef<ArrayRef<int64_t>> shapes,
                     ArrayRef<ArrayRef<int64_t>> dimOrders,
                     ArrayRef<ArrayRef<int64_t>> offsets, int64_t eb,
                     SmallVectorImpl<int64_t> &out) {
  unsigned rank = sizes.size(), n = shapes.size();
  SmallVector<SmallVector<int64_t>> strides;
  for (unsigned b = 0; b < n; ++b)
    strides.push_back(byteStrides(shapes[b], dimOrders[b], eb));
  for (unsigned b = 0; b < n; ++b) {
    int64_t off = 0;
    for (unsigned d = 0; d < rank; ++d)
      off += offsets[b][d] * strides[b][d];
    out.push_back(off);
  }
  int64_t run = eb;
  int k = static_cast<int>(rank) - 1;
  // Merge inner dims into the run while they continue it in every buffer
  // (in row-major buffers: the last dim, then each dim whose inner dims the
  // box spans fully).
  while (k >= 0 &&
         all_of(strides, [&](ArrayRef<int64_t> s) { return s[k] == run; })) {
    run *= sizes[k];
    --k;
  }
  struct Loop {
    int64_t count;
    SmallVector<int64_t, 2> strides;
  };
  SmallVector<Loop> loops;
  for (int d = 0; d <= k; ++d) {
    if (sizes[d] == 1)
      continue;
    Loop l{sizes[d], {}};
    for (unsigned b = 0; b < n; ++b)
      l.strides.push_back(strides[b][d]);
    loops.push_back(std::move(l));
  }
  for (int i = static_cast<int>(loops.size()) - 2; i >= 0; --i) {
    Loop &outer = loops[i], &inner = loops[i + 1];
    bool merge = true;
    for (unsigned b = 0; b < n; ++b)
      merge &= outer.strides[b] == inner.count * inner.strides[b];
    if (!merge)
      continue;
    inner.count *= outer.count;
    loops.erase(loops.begin() + i);
  }
  // An empty box (some size 0) is one run of 0 bytes.
  if (any_of(sizes, [](int64_t s) { return s == 0; })) {
    run = 0;
    loops.clear();
  }
  out.push_back(run);
  out.push_back(loops.size());
  for (const Loop &l : loops) {
    out.push_back(l.count);
    out.append(l.strides.begin(), l.strides.end());
  }
}

SmallVector<int64_t> reshard::boxDescriptor(ArrayRef<int64_t> shape,
                                            ArrayRef<int64_t> dimOrder,
                                            ArrayRef<int64_t> offset,
                                            ArrayRef<int64_t> sizes,
                                            int64_t elementBytes) {
  SmallVector<int64_t> out;
  describe(sizes, {shape}, {dimOrder}, {offset}, elementBytes, out);
  return out;
}

SmallVector<int64_t> reshard::copyDescriptor(
    ArrayRef<int64_t> srcShape, ArrayRef<int64_t> srcDimOrder,
    ArrayRef<int64_t> srcOffset, ArrayRef<int64_t> dstShape,
    ArrayRef<int64_t> dstDimOrder, ArrayRef<int64_t> dstOffset,
    ArrayRef<int64_t> sizes, int64_t elementBytes) {
  SmallVector<int64_t> out;
  describe(sizes, {srcShape, dstShape}, {srcDimOrder, dstDimOrder},
           {srcOffset, dstOffset}, elementBytes, out);
  return out;
}
