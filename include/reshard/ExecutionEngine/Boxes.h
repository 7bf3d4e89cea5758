/*===- Boxes.h - Strided boxes on host memory --------------------*- C++ -*-===*
 *
 * A box descriptor (PlanTables.h) names a strided box of a shard; these
 * walk its contiguous runs, cut its packed bytes into regular sub-boxes,
 * and pack, unpack and copy it with memcpy.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_BOXES_H
#define RESHARD_EXECUTIONENGINE_BOXES_H

#include <cstdint>
#include <cstring>

namespace reshard {
namespace engine {

/* Tensor ranks, hence descriptor loops, stay below this. */
const int kMaxLoops = 64;

inline int64_t box_bytes(const int64_t *d) {
  int64_t n = d[1];
  for (int64_t i = 0; i < d[2]; ++i)
    n *= d[3 + 2 * i];
  return n;
}

/* Calls f(offset_a, offset_b) for every contiguous run of a descriptor whose
 * loops are `width` integers wide with strides at `sa` and `sb` (sb = 0:
 * one buffer only). */
template <class F>
inline void for_each_run(const int64_t *loops, int64_t n, int width, int sa,
                         int sb, int64_t a, int64_t b, F &&f) {
  if (n == 0) {
    f(a, b);
    return;
  }
  for (int64_t i = 0; i < loops[0]; ++i)
    for_each_run(loops + width, n - 1, width, sa, sb, a + i * loops[sa],
                 sb ? b + i * loops[sb] : b, f);
}

/* Bytes [lo, hi) of a box (pack/unpack descriptor `d`) in packed order, as
 * at most 2n + 1 regular sub-boxes: calls f(offset, run, loops, n') with
 * (count, stride) pairs, whose packed bytes follow each other in order. */
template <class F>
inline void for_each_subbox_at(const int64_t *d, int level, int64_t base,
                               int64_t lo, int64_t hi, F &f) {
  if (lo >= hi)
    return;
  const int64_t run = d[1], n = d[2];
  const int64_t *loops = d + 3;
  if (level == n) {
    f(base + lo, hi - lo, loops, int64_t(0));
    return;
  }
  int64_t inner = run;
  for (int64_t j = level + 1; j < n; ++j)
    inner *= loops[2 * j];
  const int64_t stride = loops[2 * level + 1];
  int64_t first = lo / inner, last = (hi - 1) / inner;
  if (first == last) {
    for_each_subbox_at(d, level + 1, base + first * stride, lo - first * inner,
                       hi - first * inner, f);
    return;
  }
  if (lo % inner) {
    for_each_subbox_at(d, level + 1, base + first * stride, lo % inner, inner,
                       f);
    ++first;
  }
  int64_t end = hi / inner;
  if (end > first) {
    /* Indices [first, end) of this loop, whole: this loop with a smaller
     * count, then the inner loops as they are. */
    int64_t tmp[2 * kMaxLoops];
    int64_t m = n - level;
    tmp[0] = end - first;
    tmp[1] = stride;
    for (int64_t j = 1; j < m; ++j) {
      tmp[2 * j] = loops[2 * (level + j)];
      tmp[2 * j + 1] = loops[2 * (level + j) + 1];
    }
    if (level == n - 1 && stride == run) { /* contiguous rows: one run */
      f(base + first * stride, run * (end - first), tmp, int64_t(0));
    } else {
      f(base + first * stride, run, tmp, m);
    }
  }
  if (hi % inner)
    for_each_subbox_at(d, level + 1, base + end * stride, 0, hi % inner, f);
}

template <class F>
inline void for_each_subbox(const int64_t *d, int64_t lo, int64_t hi, F &&f) {
  for_each_subbox_at(d, 0, d[0], lo, hi, f);
}

/* Bytes [lo, hi) of a box (pack/unpack descriptor `d`) in packed order,
 * a contiguous run at a time: calls f(offset in the shard, offset from
 * lo in packed order, run). */
template <class F>
inline void for_each_packed_run(const int64_t *d, int64_t lo, int64_t hi,
                                F &&f) {
  int64_t at = 0;
  for_each_subbox(
      d, lo, hi,
      [&](int64_t off, int64_t run, const int64_t *loops, int64_t n) {
        for_each_run(loops, n, 2, 1, 0, off, 0, [&](int64_t o, int64_t) {
          f(o, at, run);
          at += run;
        });
      });
}

/* Host loops: bytes [lo, hi) of the box in packed order, from `base` into
 * `out` (pack) or from `in` into `base` (unpack). */
inline void pack_range(const int64_t *d, const uint8_t *base, int64_t lo,
                       int64_t hi, uint8_t *out) {
  for_each_packed_run(d, lo, hi, [&](int64_t o, int64_t at, int64_t run) {
    std::memcpy(out + at, base + o, run);
  });
}

inline void unpack_range(const int64_t *d, uint8_t *base, int64_t lo,
                         int64_t hi, const uint8_t *in) {
  for_each_packed_run(d, lo, hi, [&](int64_t o, int64_t at, int64_t run) {
    std::memcpy(base + o, in + at, run);
  });
}

/* A local copy (copy descriptor `d`) from one shard to another. */
inline void copy_box(const int64_t *d, const uint8_t *src, uint8_t *dst) {
  int64_t run = d[2];
  for_each_run(d + 4, d[3], 3, 1, 2, d[0], d[1], [&](int64_t a, int64_t b) {
    std::memcpy(dst + b, src + a, run);
  });
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_BOXES_H */
