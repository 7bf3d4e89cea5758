/*===- Digests.h - What each rank sent and received, as digests -*- C++ -*-===*
 *
 * After a run, the bytes of every (stream, tensor) a rank took part in, as
 * a 64-bit digest: the sender's over what it packs (its source shard, or a
 * relay's destination shard), the receiver's over what its destination
 * shard holds. Both walk the stream's items in the same order, so equal
 * bytes give equal digests, and the caller compares them across ranks
 * (python/reshard/runtime.py does, for `verify=True`). Host memory only:
 * device shards are copied to the host first.
 *
 * The digest is not cryptographic. Each 8-byte word goes through a step
 * that is a bijection of the state for a fixed word and of the word for a
 * fixed state, so two streams that differ in exactly one word always
 * differ; other corruptions go unnoticed with probability about 2^-64.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_DIGESTS_H
#define RESHARD_EXECUTIONENGINE_DIGESTS_H

#include "reshard/ExecutionEngine/Engine.h"

#include <map>

namespace reshard {
namespace engine {

/* A digest of a byte stream that does not depend on how the stream is cut
 * into runs. */
class Digest {
public:
  Digest() : h(0x9e3779b97f4a7c15ull), carry(0), pending(0), bytes(0) {}

  void feed(const uint8_t *p, int64_t n) {
    bytes += n;
    while (n > 0 && pending) {
      take(*p++);
      --n;
    }
    for (; n >= 8; p += 8, n -= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      mix(w);
    }
    while (n-- > 0)
      take(*p++);
  }

  uint64_t value() const {
    uint64_t v = h;
    if (pending)
      v = step(v, carry ^ (uint64_t(pending) << 56));
    v ^= static_cast<uint64_t>(bytes);
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    return v;
  }

  int64_t size() const { return bytes; }

private:
  static uint64_t step(uint64_t state, uint64_t w) {
    state ^= w * 0x9fb21c651e98df25ull;
    state = (state << 31) | (state >> 33);
    return state * 0xc2b2ae3d27d4eb4full;
  }
  void mix(uint64_t w) { h = step(h, w); }
  void take(uint8_t b) {
    carry |= uint64_t(b) << (8 * pending);
    if (++pending == 8) {
      mix(carry);
      carry = 0;
      pending = 0;
    }
  }

  uint64_t h, carry;
  int pending;
  int64_t bytes;
};

/* Feeds the bytes of a box (pack or unpack descriptor `d`) of `base` in
 * packed order. */
inline void digest_box(const int64_t *d, const uint8_t *base, Digest &out) {
  int64_t total = box_bytes(d);
  for_each_subbox(
      d, 0, total,
      [&](int64_t off, int64_t run, const int64_t *loops, int64_t n) {
        for_each_run(loops, n, 2, 1, 0, off, 0,
                     [&](int64_t o, int64_t) { out.feed(base + o, run); });
      });
}

/* Nulls a shadowed payload's pointer: without the workspace its digest
 * cannot be taken. */
struct NullPayload {
  explicit NullPayload(std::vector<void *> &ptrs) : ptrs(ptrs) {}
  void operator()(const QuantTensor &q, int64_t, int64_t) {
    ptrs[q.payload] = 0;
  }
  std::vector<void *> &ptrs;
};

/* The digests of `rank`'s sends, receives and local copies, one per
 * (stream, tensor) and direction, in program order. Returns how many there
 * are (writing at most `capacity` to `out`, which may be null), -1 for a
 * rank outside the plan, -2 when a shard it needs is null. A tensor
 * quantized on its receivers is digested over the shadow it received, in
 * `workspace` (the run's, as the run left it: may be null when the rank
 * has no shadow); its scales moved nothing and have no digest. */
inline int64_t rank_digests(const Plan &plan, int rank, const void *const *src,
                            const void *const *dst, const void *workspace,
                            reshard_digest *out, int64_t capacity) {
  if (rank < 0 || rank >= plan.num_ranks)
    return -1;
  const RankProgram *p = program(plan, rank);
  if (!p)
    return 0;
  std::vector<void *> shadowed;
  if (int64_t shadows = shadow_area_bytes(plan, rank)) {
    for (int t = 0; t < plan.num_tensors; ++t)
      shadowed.push_back(dst ? const_cast<void *>(dst[t]) : 0);
    if (workspace)
      point_at_shadows(plan, rank,
                       static_cast<uint8_t *>(const_cast<void *>(workspace)) +
                           p->workspace - shadows,
                       shadowed);
    else
      for_each_quantized_destination(plan, rank, NullPayload(shadowed));
    dst = shadowed.data();
  }
  /* A quantized payload leaves its sender as FP8: digest what the run sent
   * by quantizing the caller's shards again, the same way. */
  std::vector<void *> quantized;
  std::vector<uint8_t> area;
  if (plan.num_quant_tensors && src) {
    struct Missing { /* a source shard the quantizer needs is null */
      const void *const *src;
      bool any;
      void operator()(const QuantTensor &q, int64_t, int64_t payload, int64_t) {
        any = any || (payload > 0 && !src[q.payload]);
      }
    } m = {src, false};
    for_each_quantized_source(plan, rank, m);
    if (m.any)
      return -2;
    for (int t = 0; t < plan.num_tensors; ++t)
      quantized.push_back(const_cast<void *>(src[t]));
    area.resize(static_cast<size_t>(quant_area_bytes(plan, rank, false)) + 1);
    HostMover mover;
    quantize_sources(plan, *p, area.data(), quantized, mover);
    src = quantized.data();
  }
  int64_t count = 0;
  bool missing = false;
  /* One stream's items (or the copies), each member's box from `shards`
   * with the pack (from source) or unpack descriptor. */
  struct Walk {
    int64_t first, n;
  };
  auto emit = [&](const Walk &w, int32_t sender, int32_t receiver,
                  int32_t phase, int direction, const void *const *shards,
                  bool packFromSource) {
    std::map<int64_t, Digest> perTensor;
    std::vector<int64_t> order;
    for (int64_t i = w.first; i < w.first + w.n; ++i) {
      const Item &it = plan.items[i];
      const Group &g = plan.groups[it.group];
      const Piece &piece =
          plan.pieces[plan.classes[g.cls].first_piece + it.piece];
      for (int64_t k = 0; k < it.count; ++k) {
        int64_t t = member_tensor(plan, g, it.start + k * int64_t(it.stride));
        if (receiver_scales(plan, t))
          continue;
        std::map<int64_t, Digest>::iterator at = perTensor.find(t);
        if (at == perTensor.end()) {
          at = perTensor.insert(std::make_pair(t, Digest())).first;
          order.push_back(t);
        }
        if (!out || piece.bytes == 0)
          continue;
        if (!shards || !shards[t]) {
          missing = true;
          continue;
        }
        digest_box(plan.words + (packFromSource ? piece.pack : piece.unpack),
                   static_cast<const uint8_t *>(shards[t]), at->second);
      }
    }
    for (size_t j = 0; j < order.size(); ++j, ++count) {
      if (!out || count >= capacity)
        continue;
      const Digest &d = perTensor[order[j]];
      reshard_digest r = {
          sender,    receiver, phase,     static_cast<int32_t>(order[j]),
          direction, 0,        d.value(), d.size()};
      out[count] = r;
    }
  };
  int32_t me = static_cast<int32_t>(rank);
  Walk copies = {p->first_copy, p->num_copies};
  emit(copies, me, me, -1, 0, src, true);
  emit(copies, me, me, -1, 1, dst, false);
  /* A stream through a transit is digested at its two ends as the holder's
   * stream it is (phase 0, holder to receiver); the transit, which keeps
   * no copy, adds nothing. */
  for (int64_t i = 0; i < p->num_sends; ++i) {
    const Stream s = stream_at(plan, p->first_send + i);
    Walk w = {s.first_item, s.num_items};
    if (transit_out(s))
      continue;
    if (transit_in(s))
      emit(w, s.sender, static_cast<int32_t>(s.phase - kTransitIn), 0, 0, src,
           true);
    else
      emit(w, s.sender, s.receiver, static_cast<int32_t>(s.phase), 0,
           s.phase == 0 ? src : dst, s.phase == 0);
  }
  for (int64_t i = 0; i < p->num_recvs; ++i) {
    const Stream s = recv_stream(plan, *p, i);
    Walk w = {s.first_item, s.num_items};
    if (transit_in(s))
      continue;
    if (transit_out(s))
      emit(w, static_cast<int32_t>(s.phase - kTransitOut), s.receiver, 0, 1,
           dst, false);
    else
      emit(w, s.sender, s.receiver, static_cast<int32_t>(s.phase), 1, dst,
           false);
  }
  return missing ? -2 : count;
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_DIGESTS_H */
