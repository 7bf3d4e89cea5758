/*===- Steps.h - Streams cut into steps --------------------------*- C++ -*-===*
 *
 * The step walker: which bytes of which streams each step of a rank's
 * program sends and receives, as one message per peer and direction, where
 * they sit in the staging area, the staging every step needs, and what a
 * transit keeps between steps.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_STEPS_H
#define RESHARD_EXECUTIONENGINE_STEPS_H

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "reshard/ExecutionEngine/PlanTables.h"

namespace reshard {
namespace engine {

/*===-- Items and streams -------------------------------------------------===*/

/* Calls f(tensor, piece) for every (member tensor, piece) of an item, in
 * order. */
template <class F>
inline void for_each_member(const Plan &plan, const Item &it, F &&f) {
  const Group &g = plan.groups[it.group];
  const Piece &piece = plan.pieces[plan.classes[g.cls].first_piece + it.piece];
  for (int64_t i = 0; i < it.count; ++i)
    f(member_tensor(plan, g, it.start + i * int64_t(it.stride)), piece);
}

/* Where a stream's next byte is: item, member of the item, byte of that
 * member's box. Streams are walked front to back, one step at a time. */
struct Cursor {
  int64_t item, member, offset;
  Cursor() : item(0), member(0), offset(0) {}
};

/* The next `bytes` bytes of stream `s` from `c`, as f(tensor, piece, lo,
 * hi): bytes [lo, hi) of that tensor's box of that piece. */
template <class F>
inline void for_each_segment(const Plan &plan, const Stream &s, Cursor &c,
                             int64_t bytes, F &&f) {
  while (bytes > 0 && c.item < s.num_items) {
    const Item &it = plan.items[s.first_item + c.item];
    const Group &g = plan.groups[it.group];
    const Piece &piece =
        plan.pieces[plan.classes[g.cls].first_piece + it.piece];
    int64_t take = piece.bytes - c.offset;
    take = take < bytes ? take : bytes;
    f(member_tensor(plan, g, it.start + c.member * int64_t(it.stride)), piece,
      c.offset, c.offset + take);
    bytes -= take;
    c.offset += take;
    if (c.offset == piece.bytes) {
      c.offset = 0;
      if (++c.member == it.count) {
        c.member = 0;
        ++c.item;
      }
    }
  }
}

/* One message of a step: the streams [first, first + count) of one
 * direction (indices into the rank's send or receive list), all with one
 * peer, sliced for this step; one between them that is not active in the
 * step (a relay lane that has not started or has ended) adds nothing. A
 * rank sends a peer at most one message a step. */
struct Message {
  int64_t peer, bytes, staging;
  int64_t first, count;
};

/* Stream i of a rank's sends (`send`) or receives. */
inline Stream program_stream(const Plan &plan, const RankProgram &p, bool send,
                             int64_t i) {
  return send ? stream_at(plan, p.first_send + i) : recv_stream(plan, p, i);
}

/* A stream's bytes in step `step`: [*lo, *hi) of its bytes (empty when it
 * is not active). */
inline void stream_slice(const Stream &s, int64_t step, int64_t *lo,
                         int64_t *hi) {
  *lo = *hi = 0;
  if (step < s.start || step >= s.start + stream_steps(s))
    return;
  *lo = (step - s.start) * s.quota;
  *hi = *lo + s.quota < s.bytes ? *lo + s.quota : s.bytes;
}

/* One direction's messages of a rank in one step (sends, or receives),
 * one per peer (its active streams to that peer, phase 0 first), staged
 * from `base` at aligned offsets. Returns their aligned bytes. */
inline int64_t direction_messages(const Plan &plan, const RankProgram &p,
                                  int64_t step, bool send, int64_t base,
                                  std::vector<Message> &out) {
  out.clear();
  int64_t at = base;
  int64_t n = send ? p.num_sends : p.num_recvs;
  for (int64_t i = 0; i < n; ++i) {
    const Stream s = program_stream(plan, p, send, i);
    int64_t lo, hi;
    stream_slice(s, step, &lo, &hi);
    if (hi <= lo)
      continue;
    int64_t peer = send ? s.receiver : s.sender;
    /* A peer's streams are consecutive (sorted by peer). */
    if (!out.empty() && out.back().peer == peer) {
      out.back().bytes += hi - lo;
      out.back().count = i - out.back().first + 1;
      continue;
    }
    if (!out.empty())
      at = align_up(at + out.back().bytes);
    Message m = {peer, hi - lo, at, i, 1};
    out.push_back(m);
  }
  if (!out.empty())
    at = align_up(at + out.back().bytes);
  return at - base;
}

/* The messages of one rank in step `step`: its sends, its receives and,
 * in `ahead`, the next step's receives when the plan posts them ahead
 * (receives_ahead; else empty). All three are staged at once, in a
 * staging area of `area` bytes: even steps' receives at its start, odd
 * steps' at its end, and the sends right after the even step's receives
 * (posted ahead or not). So a step's receives sit at the same offsets in
 * the step before it (posted ahead) and in their own step, and never meet
 * the sends or receives of either. Returns the aligned bytes the step
 * stages; `area` < 0 computes just that (offsets then not final). */
inline int64_t step_messages(const Plan &plan, const RankProgram &p,
                             int64_t step, int64_t area,
                             std::vector<Message> &sends,
                             std::vector<Message> &recvs,
                             std::vector<Message> &ahead) {
  int64_t now = direction_messages(plan, p, step, false, 0, recvs);
  int64_t next = 0;
  if (plan.receives_ahead)
    next = direction_messages(plan, p, step + 1, false, 0, ahead);
  else
    ahead.clear();
  int64_t even = step % 2 == 0 ? now : next;
  int64_t sent = direction_messages(plan, p, step, true, even, sends);
  if (area >= 0) {
    std::vector<Message> &odd = step % 2 == 0 ? ahead : recvs;
    int64_t shift = area - (step % 2 == 0 ? next : now);
    for (size_t m = 0; m < odd.size(); ++m)
      odd[m].staging += shift;
  }
  return now + sent + next;
}

/* One direction's messages of a rank in every step [0, steps] at once:
 * per step what direction_messages gives (the aligned bytes it stages,
 * the bytes, the count). A peer's message keeps its size between the
 * steps where one of its streams starts, reaches its last (shorter)
 * slice or ends, so a sweep over those points costs O(streams log
 * streams + steps) where walking the steps costs O(streams x steps)
 * (0.4 s of Kimi-K2's lowering). A program's streams are sorted by peer
 * (the verifier's rule). */
struct StepLoads {
  std::vector<int64_t> aligned, bytes, messages;
};

inline void direction_loads(const Plan &plan, const RankProgram &p, bool send,
                            int64_t steps, StepLoads &out) {
  /* Differences over the steps first, prefix sums at the end. */
  out.aligned.assign(steps + 2, 0);
  out.bytes.assign(steps + 2, 0);
  out.messages.assign(steps + 2, 0);
  std::vector<std::pair<int64_t, int64_t>> events; /* (step, change) */
  int64_t n = send ? p.num_sends : p.num_recvs;
  for (int64_t i = 0; i < n;) {
    events.clear();
    int64_t peer = -1;
    for (; i < n; ++i) {
      const Stream s = program_stream(plan, p, send, i);
      int64_t at = send ? s.receiver : s.sender;
      if (peer >= 0 && at != peer)
        break;
      peer = at;
      int64_t k = stream_steps(s);
      if (k == 0)
        continue;
      int64_t last = s.start + k - 1, tail = s.bytes - (k - 1) * s.quota;
      events.push_back(std::make_pair(s.start, s.quota));
      events.push_back(std::make_pair(last, tail - s.quota));
      events.push_back(std::make_pair(last + 1, -tail));
    }
    std::sort(events.begin(), events.end());
    int64_t size = 0;
    for (size_t e = 0; e < events.size();) {
      int64_t from = events[e].first;
      for (; e < events.size() && events[e].first == from; ++e)
        size += events[e].second;
      int64_t to = e < events.size() ? events[e].first : from;
      from = from < 0 ? 0 : from;
      to = to > steps + 1 ? steps + 1 : to;
      if (size <= 0 || from >= to)
        continue;
      out.aligned[from] += align_up(size);
      out.aligned[to] -= align_up(size);
      out.bytes[from] += size;
      out.bytes[to] -= size;
      out.messages[from] += 1;
      out.messages[to] -= 1;
    }
  }
  for (int64_t s = 1; s <= steps + 1; ++s) {
    out.aligned[s] += out.aligned[s - 1];
    out.bytes[s] += out.bytes[s - 1];
    out.messages[s] += out.messages[s - 1];
  }
}

/* What step_messages returns for step s, from both directions' loads
 * (through step s + 1): the receives, the sends and, when the plan posts
 * them ahead, the next step's receives. */
inline int64_t step_staging(const Plan &plan, const StepLoads &sends,
                            const StepLoads &recvs, int64_t s) {
  int64_t next = plan.receives_ahead ? recvs.aligned[s + 1] : 0;
  return recvs.aligned[s] + sends.aligned[s] + next;
}

/* The staging area of a rank: its largest step's staging. */
inline int64_t rank_workspace(const Plan &plan, const RankProgram &p) {
  StepLoads sends, recvs;
  direction_loads(plan, p, true, p.steps, sends);
  direction_loads(plan, p, false, p.steps, recvs);
  int64_t most = 0;
  for (int64_t s = 0; s < p.steps; ++s) {
    int64_t used = step_staging(plan, sends, recvs, s);
    most = used > most ? used : most;
  }
  return most;
}

/* 1 + the last step of any of a rank's streams (0: none). */
inline int64_t rank_steps(const Plan &plan, const RankProgram &p) {
  int64_t last = 0;
  for (int64_t i = 0; i < p.num_sends + p.num_recvs; ++i) {
    const Stream s = i < p.num_sends ? stream_at(plan, p.first_send + i)
                                     : recv_stream(plan, p, i - p.num_sends);
    int64_t end = s.start + stream_steps(s);
    last = end > last ? end : last;
  }
  return last;
}

/*===-- Transits ----------------------------------------------------------===*/

/* What a transit keeps between steps: per stream it receives in a transit
 * phase, one step's slice (its quota), at aligned offsets in that order.
 * `offsets`, when given, gets each receive's offset (-1: not a transit's).
 * Returns the bytes. */
inline int64_t carry_area_bytes(const Plan &plan, const RankProgram &p,
                                std::vector<int64_t> *offsets = 0) {
  int64_t at = 0;
  if (offsets)
    offsets->assign(p.num_recvs, -1);
  for (int64_t i = 0; i < p.num_recvs; ++i) {
    const Stream s = recv_stream(plan, p, i);
    if (!transit_in(s))
      continue;
    if (offsets)
      (*offsets)[i] = at;
    at += align_up(s.quota);
  }
  return at;
}

/* The bytes a transit keeps at once, unaligned (what the staging budget
 * counts). */
inline int64_t carry_bytes(const Plan &plan, const RankProgram &p) {
  int64_t bytes = 0;
  for (int64_t i = 0; i < p.num_recvs; ++i) {
    const Stream s = recv_stream(plan, p, i);
    if (transit_in(s))
      bytes += s.quota;
  }
  return bytes;
}

/* The index among p's receives of the stream a transit's send `s`
 * forwards (from its original sender, in the phase naming its receiver),
 * or -1. A rank's receives are sorted by (sender, phase). */
inline int64_t forwarded_recv(const Plan &plan, const RankProgram &p,
                              const Stream &s) {
  if (!transit_out(s))
    return -1;
  int64_t sender = s.phase - kTransitOut, phase = kTransitIn + s.receiver;
  int64_t lo = 0, hi = p.num_recvs;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    const Stream r = recv_stream(plan, p, mid);
    if (r.sender < sender || (r.sender == sender && r.phase < phase))
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < p.num_recvs) {
    const Stream r = recv_stream(plan, p, lo);
    if (r.sender == sender && r.phase == phase)
      return lo;
  }
  return -1;
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_STEPS_H */
