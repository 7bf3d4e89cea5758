/*===- HostMover.h - Byte moves on host memory -------------------*- C++ -*-===*
 *
 * The mover of the MPI backend and the in-process executor: memcpy for
 * boxes and bytes, the host loops for quantizing.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_HOSTMOVER_H
#define RESHARD_EXECUTIONENGINE_HOSTMOVER_H

#include <cstdint>
#include <cstring>

#include "reshard/ExecutionEngine/Boxes.h"
#include "reshard/ExecutionEngine/Quantize.h"

namespace reshard {
namespace engine {

/* Moves bytes on host memory with memcpy: the MPI backend's mover and the
 * in-process executor's. A mover answers 0 or an error code. */
struct HostMover {
  int copy(const int64_t *d, const void *src, void *dst) {
    copy_box(d, static_cast<const uint8_t *>(src), static_cast<uint8_t *>(dst));
    return 0;
  }
  int pack(const int64_t *d, const void *base, int64_t lo, int64_t hi,
           uint8_t *out) {
    pack_range(d, static_cast<const uint8_t *>(base), lo, hi, out);
    return 0;
  }
  int unpack(const int64_t *d, void *base, int64_t lo, int64_t hi,
             const uint8_t *in) {
    unpack_range(d, static_cast<uint8_t *>(base), lo, hi, in);
    return 0;
  }
  /* Contiguous bytes: what a transit keeps and forwards. */
  int bytes(const uint8_t *from, uint8_t *to, int64_t n) {
    if (n > 0)
      memcpy(to, from, static_cast<size_t>(n));
    return 0;
  }
  /* `blocks` and `runs` (the plan's words) say the same as `sb`, in the
   * compact form the device quantizer takes. A null `out`: the scales
   * only. */
  int quantize(int kind, int input, const ShardBlocks &sb, const int64_t *,
               const int64_t *, const void *in, uint8_t *out, void *scales) {
    quantize_shard_host(kind, input, sb, in, out, scales);
    return 0;
  }
  /* The fused pack: copy() and pack() of a payload its senders quantize,
   * from the caller's full-precision shard (QuantizedSource). */
  template <class Source>
  int copy_quantized(const int64_t *d, const Source &s, void *dst) {
    HostFloatDefaults defaults;
    QuantSource q = s.host();
    int64_t run = d[2];
    for_each_run(d + 4, d[3], 3, 1, 2, d[0], d[1], [&](int64_t a, int64_t b) {
      quantize_elements(q, a, run, static_cast<uint8_t *>(dst) + b);
    });
    return 0;
  }
  template <class Source>
  int pack_quantized(const int64_t *d, const Source &s, int64_t lo, int64_t hi,
                     uint8_t *out) {
    HostFloatDefaults defaults;
    QuantSource q = s.host();
    for_each_packed_run(d, lo, hi, [&](int64_t o, int64_t at, int64_t run) {
      quantize_elements(q, o, run, out + at);
    });
    return 0;
  }
};

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_HOSTMOVER_H */
