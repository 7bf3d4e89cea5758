//===- RelayTiming.h - When a relay may forward it ------------*- C++ -*-===//
//
// A relay forwards boxes from its destination shard, where they land as
// its phase-0 receives unpack them at the end of each step. It may send a
// byte in any step after the one that byte arrived in, so a large box that
// arrives over many steps is forwarded while it still arrives (cut
// through), not after its last byte. The planner (start of a relay's
// stream) and the lowered plan's verifier use the same bound, which is
// linear in the member and the byte and so is checked at four corners
// instead of per byte.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_RELAYTIMING_H
#define RESHARD_LAYOUT_RELAYTIMING_H

#include <cstdint>
#include <limits>

namespace reshard {

/// Members one relayed item shares with one phase-0 item that brought
/// them: `count` members of `bytes` bytes each; shared member t starts at
/// byte inAt + t * inGap of the incoming stream (start inStart, inQuota
/// bytes a step) and at byte outAt + t * outGap of the relay's stream.
struct SharedMembers {
  int64_t count, bytes;
  int64_t inStart, inQuota, inAt, inGap;
  int64_t outAt, outGap;
};

/// An item at byte `at` of a stream, of members memberStart + i *
/// memberStride.
struct MemberRun {
  int64_t at, memberStart, memberStride;
  /// Where member `k`, of `bytes` bytes a member, starts in the stream.
  int64_t byteOf(int64_t k, int64_t bytes) const {
    return at +
           (memberStride > 0 ? (k - memberStart) / memberStride : 0) * bytes;
  }
};

/// The `count` members first, first + stride, ... that `in` (in a stream
/// from step inStart, inQuota bytes a step) and `out` (the relay's) share.
inline SharedMembers sharedMembers(int64_t first, int64_t stride, int64_t count,
                                   int64_t bytes, int64_t inStart,
                                   int64_t inQuota, const MemberRun &in,
                                   const MemberRun &out) {
  auto gap = [&](const MemberRun &r) {
    return count > 1 ? r.byteOf(first + stride, bytes) - r.byteOf(first, bytes)
                     : 0;
  };
  return {count,
          bytes,
          inStart,
          inQuota,
          in.byteOf(first, bytes),
          gap(in),
          out.byteOf(first, bytes),
          gap(out)};
}

/// The least start of the relay's stream, moving outQuota bytes a step,
/// that sends every byte of the shared members in a later step than the
/// one it arrives in. Byte b of a stream goes in step start + floor(b / q);
/// with floor(x / q) >= (x - q + 1) / q and floor(y / p) <= y / p the
/// condition start + floor(out / q) >= inStart + floor(in / p) + 1 follows
/// from one linear in (member, byte), whose largest demand is at a corner.
/// The bound is at most two steps later than the exact one.
inline int64_t leastCutThroughStart(const SharedMembers &m, int64_t outQuota) {
  if (m.count <= 0 || m.bytes <= 0)
    return std::numeric_limits<int64_t>::min();
  __int128 p = m.inQuota, q = outQuota;
  __int128 best = std::numeric_limits<int64_t>::min();
  for (int64_t t : {int64_t(0), m.count - 1})
    for (int64_t k : {int64_t(0), m.bytes - 1}) {
      __int128 in = static_cast<__int128>(m.inAt) +
                    static_cast<__int128>(m.inGap) * t + k;
      __int128 out = static_cast<__int128>(m.outAt) +
                     static_cast<__int128>(m.outGap) * t + k;
      __int128 need = q * (static_cast<__int128>(m.inStart) * p + in) + q * p -
                      p * (out - q + 1);
      best = need > best ? need : best;
    }
  __int128 d = p * q;
  // ceil(best / d) for either sign.
  __int128 start = best >= 0 ? (best + d - 1) / d : -((-best) / d);
  return static_cast<int64_t>(start);
}

} // namespace reshard

#endif // RESHARD_LAYOUT_RELAYTIMING_H
