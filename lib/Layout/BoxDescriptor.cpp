//===- BoxDescriptor.cpp - Boxes of a shard as strided byte loops ---------===//
#include "reshard/Layout/BoxDescriptor.h"

#include "llvm/ADT/STLExtras.h"

using namespace llvm;
using namespace reshard;

/// Row-major byte strides of a dense buffer of `shape`.
static SmallVector<int64_t> byteStrides(ArrayRef<int64_t> shape, int64_t eb) {
  SmallVector<int64_t> strides(shape.size());
  int64_t s = eb;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

/// The byte offset of `offsets` in each buffer, the shared run, and the
/// loops, outermost first, with one stride per buffer.
static void describe(ArrayRef<int64_t> sizes,
                     ArrayRef<ArrayRef<int64_t>> shapes,
                     ArrayRef<ArrayRef<int64_t>> offsets, int64_t eb,
                     SmallVectorImpl<int64_t> &out) {
  unsigned rank = sizes.size(), n = shapes.size();
  SmallVector<SmallVector<int64_t>> strides;
  for (ArrayRef<int64_t> shape : shapes)
    strides.push_back(byteStrides(shape, eb));
  for (unsigned b = 0; b < n; ++b) {
    int64_t off = 0;
    for (unsigned d = 0; d < rank; ++d)
      off += offsets[b][d] * strides[b][d];
    out.push_back(off);
  }
  int64_t run = eb;
  int k = static_cast<int>(rank) - 1;
  // Merge inner dims while the box spans them fully in every buffer.
  while (k >= 0) {
    run *= sizes[k];
    bool full =
        all_of(shapes, [&](ArrayRef<int64_t> s) { return s[k] == sizes[k]; });
    --k;
    if (!full)
      break;
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
                                            ArrayRef<int64_t> offset,
                                            ArrayRef<int64_t> sizes,
                                            int64_t elementBytes) {
  SmallVector<int64_t> out;
  describe(sizes, {shape}, {offset}, elementBytes, out);
  return out;
}

SmallVector<int64_t>
reshard::copyDescriptor(ArrayRef<int64_t> srcShape, ArrayRef<int64_t> srcOffset,
                        ArrayRef<int64_t> dstShape, ArrayRef<int64_t> dstOffset,
                        ArrayRef<int64_t> sizes, int64_t elementBytes) {
  SmallVector<int64_t> out;
  describe(sizes, {srcShape, dstShape}, {srcOffset, dstOffset}, elementBytes,
           out);
  return out;
}
