/*===- Engine.h - What generated reshard plans run on ------------*- C++ -*-===*
 *
 * Header-only, C++11, no dependencies beyond the standard library. A rank's
 * program, run a step at a time over a mover (the byte moves) and an
 * exchange (the transport); the MPI and NCCL backends (MpiBackend.h,
 * NcclBackend.h) build on it, and reshard-proptest runs the same code in
 * one process on every random case (lib/Reference/RuntimeInterpreter.cpp).
 * It includes the rest of the engine:
 *   PlanTables.h  the tables reshard-compile emits (the one owner of their
 *                 schema) and lookups of shards and streams in them;
 *   Steps.h       streams cut into steps: each step's messages, staging;
 *   Parts.h       messages cut into parts, large segments sent in place;
 *   Boxes.h       packing, unpacking and copying strided boxes;
 *   QuantAreas.h  quantized sources and shadows in the workspace;
 *   CallChecks.h  argument checks and the agreement before any byte moves;
 *   HostMover.h   the memcpy mover.
 * Error codes: ErrorCodes.h.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_ENGINE_H
#define RESHARD_EXECUTIONENGINE_ENGINE_H

#include <cstdint>
#include <vector>

#include "reshard/ExecutionEngine/Boxes.h"
#include "reshard/ExecutionEngine/CallChecks.h"
#include "reshard/ExecutionEngine/ErrorCodes.h"
#include "reshard/ExecutionEngine/HostMover.h"
#include "reshard/ExecutionEngine/Parts.h"
#include "reshard/ExecutionEngine/PlanTables.h"
#include "reshard/ExecutionEngine/QuantAreas.h"
#include "reshard/ExecutionEngine/Quantize.h"
#include "reshard/ExecutionEngine/Steps.h"

namespace reshard {
namespace engine {

/* One rank's program, a step at a time: the local copies (or, with
 * overlap_copies, inside the first exchange), then per step
 * pack() every send of the step into `staging` (the workspace), let the
 * transport move the messages, and unpack() every receive. The workspace
 * holds exactly one step at a time. A mover (HostMover, or the NCCL
 * backend's) does the byte moves and answers 0 or an error code. */
template <class Mover> class ProgramRunner {
public:
  ProgramRunner(const Plan &plan, const RankProgram &p, void *const *src,
                void *const *dst, uint8_t *staging, Mover &mover)
      : plan(plan), p(p), srcs(src, src + plan.num_tensors),
        dsts(dst, dst + plan.num_tensors), callers_dst(dst), src(srcs.data()),
        dst(dsts.data()), staging(staging), mover(mover),
        cursors(p.num_sends + p.num_recvs), directMin(0), maxPart(0),
        copied(false), overlapCopies(false) {
    /* Workspace: staging | carry | source scales | shadows. */
    carryBase = shadows() - quant_area_bytes(plan, p.rank) -
                carry_area_bytes(plan, p, &carryAt);
    area = carryBase - staging;
  }

  /* The exchange calls copies() itself once it has posted a step's
   * messages (they read and write no byte the copies write). */
  void overlap_copies() { overlapCopies = true; }
  bool copies_overlap() const { return overlapCopies; }

  /* From now on, pack() also cuts every message into parts (Parts.h):
   * segments of at least `direct_min` bytes (> 0) are parts of their own
   * and, where contiguous in their tensor, are not packed or unpacked;
   * no part is longer than `max_part` bytes (> 0). */
  void cut_into_parts(int64_t direct_min, int64_t max_part) {
    directMin = direct_min;
    maxPart = max_part;
  }

  /* Computes the scales of the rank's quantized sources (the fused pack
   * quantizes their payloads) and points the payloads it quantizes on
   * receipt at their shadows (before copies and steps). */
  int quantize() {
    if (!plan.num_quant_tensors)
      return RESHARD_OK;
    point_at_shadows(plan, p.rank, shadows(), dsts);
    uint8_t *area = shadows() - quant_area_bytes(plan, p.rank);
    fused.resize(plan.num_tensors);
    return quantize_sources(plan, p, area, srcs, mover, &fused);
  }

  /* Quantizes the shadows into the caller's shards (after the last step). */
  int quantize_received() {
    if (!plan.num_quant_tensors)
      return RESHARD_OK;
    return quantize_shadows(plan, p, shadows(), callers_dst, mover);
  }

  /* The local copies run once, at the first call (later calls do
   * nothing): before the first step, or with overlap_copies() inside the
   * first exchange, while its messages move. */
  int copies() {
    if (copied)
      return RESHARD_OK;
    copied = true;
    int rc = RESHARD_OK;
    for (int64_t i = 0; rc == RESHARD_OK && i < p.num_copies; ++i) {
      const Item &it = plan.items[p.first_copy + i];
      const Group &g = plan.groups[it.group];
      const Piece &piece =
          plan.pieces[plan.classes[g.cls].first_piece + it.piece];
      for (int64_t k = 0; rc == RESHARD_OK && k < it.count; ++k) {
        int64_t t = member_tensor(plan, g, it.start + k * int64_t(it.stride));
        if (quantizes(t))
          rc = mover.copy_quantized(plan.words + piece.copy, *fused[t], dst[t]);
        else if (!receiver_scales(plan, t))
          rc = mover.copy(plan.words + piece.copy, src[t], dst[t]);
      }
    }
    return rc;
  }

  /* The messages of `step` (in `sends` and `recvs`, the next step's
   * receives in `ahead`), the sends packed. */
  int pack(int64_t step) {
    step_messages(plan, p, step, area, sends, recvs, ahead);
    if (maxPart > 0)
      cut_parts(step);
    int rc = RESHARD_OK;
    for (size_t m = 0; rc == RESHARD_OK && m < sends.size(); ++m) {
      uint8_t *out = staging + sends[m].staging;
      for (int64_t i = sends[m].first; i < sends[m].first + sends[m].count;
           ++i) {
        const Stream s = stream_at(plan, p.first_send + i);
        int64_t lo, hi;
        stream_slice(s, step, &lo, &hi);
        if (transit_out(s)) { /* what it received the step before */
          int64_t r = forwarded_recv(plan, p, s);
          if (rc == RESHARD_OK && hi > lo)
            rc = mover.bytes(carry() + carryAt[r], out, hi - lo);
          out += hi - lo;
          continue;
        }
        /* A relay forwards from its destination shard, where the box
         * sits as it unpacked it. */
        Segments<true> seg = {
            this,     packs_source(s) ? src : dst, out, 0, &rc, packs_source(s),
            direct(s)};
        for_each_segment(plan, s, cursors[i], hi - lo, seg);
        out = seg.out;
      }
    }
    return rc;
  }

  /* Unpacks the receives of the step last packed. */
  int unpack(int64_t step) {
    int rc = RESHARD_OK;
    for (size_t m = 0; rc == RESHARD_OK && m < recvs.size(); ++m) {
      const uint8_t *in = staging + recvs[m].staging;
      for (int64_t i = recvs[m].first; i < recvs[m].first + recvs[m].count;
           ++i) {
        const Stream s = recv_stream(plan, p, i);
        int64_t lo, hi;
        stream_slice(s, step, &lo, &hi);
        if (transit_in(s)) { /* kept for the next step */
          if (rc == RESHARD_OK && hi > lo)
            rc = mover.bytes(in, carry() + carryAt[i], hi - lo);
          in += hi - lo;
          continue;
        }
        Segments<false> seg = {this, dst, 0, in, &rc, false, direct(s)};
        for_each_segment(plan, s, cursors[p.num_sends + i], hi - lo, seg);
        in = seg.in;
      }
    }
    return rc;
  }

  int64_t steps() const { return p.steps; }

  std::vector<Message> sends, recvs, ahead;
  /* With cut_into_parts: each message's parts, in order. */
  std::vector<std::vector<Part>> sendParts, recvParts, aheadParts;

private:
  /* The callback of for_each_segment (C++11 has no generic lambdas). */
  template <bool Pack> struct Segments {
    ProgramRunner *self;
    void *const *buffers;
    uint8_t *out;
    const uint8_t *in;
    int *rc;
    bool fromSource;
    bool mayBeDirect; /* its large segments may travel in place */
    void operator()(int64_t t, const Piece &piece, int64_t a, int64_t b) {
      const int64_t *box =
          self->plan.words + (fromSource ? piece.pack : piece.unpack);
      if (mayBeDirect &&
          self->in_place(buffers, t, piece, a, b, Pack, fromSource)) {
        /* The transport moves it, straight from or into the tensor. */
      } else if (*rc == RESHARD_OK && Pack && fromSource && self->quantizes(t))
        *rc = self->mover.pack_quantized(box, *self->fused[t], a, b, out);
      else if (*rc == RESHARD_OK)
        *rc = Pack ? self->mover.pack(box, buffers[t], a, b, out)
                   : self->mover.unpack(box, buffers[t], a, b, in);
      if (Pack)
        out += b - a;
      else
        in += b - a;
    }
  };

  /* One message's parts: the streams' slices in order, a transit's
   * whole, each other stream's a segment at a time. */
  struct Cut {
    ProgramRunner *self;
    PartCutter *cutter;
    void *const *buffers;
    bool send, fromSource;
    void operator()(int64_t t, const Piece &piece, int64_t a, int64_t b) {
      if (b - a < self->directMin)
        cutter->staged(b - a);
      else
        cutter->own(self->in_place(buffers, t, piece, a, b, send, fromSource),
                    b - a);
    }
  };

  /* Segments of a non-transit stream may travel in place (Parts.h). */
  bool direct(const Stream &s) const {
    return maxPart > 0 && !transit_in(s) && !transit_out(s);
  }

  /* Where a segment of at least directMin bytes sits in its tensor when
   * it travels in place (its bytes one run there, and no quantizing on
   * the way); else null. */
  uint8_t *in_place(void *const *buffers, int64_t t, const Piece &piece,
                    int64_t a, int64_t b, bool send, bool fromSource) const {
    if (b - a < directMin || (send && fromSource && quantizes(t)))
      return nullptr;
    const int64_t *box = plan.words + (fromSource ? piece.pack : piece.unpack);
    int64_t at = contiguous_offset(box, a, b);
    return at < 0 ? nullptr : static_cast<uint8_t *>(buffers[t]) + at;
  }

  /* The parts of this step's messages and of the next step's receives,
   * walked on copies of the cursors (pack and unpack walk them again). */
  void cut_parts(int64_t step) {
    scratch = cursors;
    cut(sends, true, step, sendParts);
    cut(recvs, false, step, recvParts);
    cut(ahead, false, step + 1, aheadParts);
  }

  void cut(const std::vector<Message> &list, bool send, int64_t step,
           std::vector<std::vector<Part>> &parts) {
    parts.resize(list.size());
    for (size_t m = 0; m < list.size(); ++m) {
      parts[m].clear();
      PartCutter cutter(staging + list[m].staging, maxPart, parts[m]);
      for (int64_t i = list[m].first; i < list[m].first + list[m].count; ++i) {
        const Stream s = program_stream(plan, p, send, i);
        int64_t lo, hi;
        stream_slice(s, step, &lo, &hi);
        if (hi <= lo)
          continue;
        if (!direct(s)) {
          cutter.staged(hi - lo);
          continue;
        }
        bool fromSource = send && packs_source(s);
        Cut walk = {this, &cutter, fromSource ? src : dst, send, fromSource};
        for_each_segment(plan, s, scratch[(send ? 0 : p.num_sends) + i],
                         hi - lo, walk);
      }
      cutter.flush();
    }
  }

  uint8_t *shadows() {
    return staging + p.workspace - shadow_area_bytes(plan, p.rank);
  }
  /* Whether tensor t's source is a payload packed through the quantizer. */
  bool quantizes(int64_t t) const {
    return !fused.empty() && fused[t] != nullptr;
  }
  uint8_t *carry() { return carryBase; }

  const Plan &plan;
  const RankProgram &p;
  std::vector<void *> srcs; /* the caller's, quantized scales in place */
  FusedSources fused;       /* per tensor: its fused pack, or null */
  std::vector<void *> dsts; /* the caller's, shadows in place */
  void *const *callers_dst;
  void *const *src, *const *dst;
  uint8_t *staging;
  Mover &mover;
  std::vector<Cursor> cursors, scratch;
  int64_t directMin, maxPart; /* cut_into_parts's; maxPart 0: no parts */
  bool copied, overlapCopies;
  std::vector<int64_t> carryAt; /* per receive (transit_in) */
  uint8_t *carryBase;
  int64_t area; /* the staging area's bytes */
};

/* Runs a runner's program with exchange(step) as the transport: post
 * and complete every message of the step (the runner's sends, recvs and
 * their parts; 0 or an error code). It may post the next step's receives
 * (`ahead`, their staging reserved) before the step completes, and then
 * must not post them again in that step. */
template <class Mover, class Exchange>
inline int run_steps(ProgramRunner<Mover> &runner, Exchange &&exchange) {
  int rc = runner.quantize();
  if (rc == RESHARD_OK && !runner.copies_overlap())
    rc = runner.copies();
  for (int64_t step = 0; rc == RESHARD_OK && step < runner.steps(); ++step) {
    if ((rc = runner.pack(step)))
      break;
    if (runner.sends.empty() && runner.recvs.empty())
      continue;
    if ((rc = exchange(step)))
      break;
    rc = runner.unpack(step);
  }
  if (rc == RESHARD_OK) /* a rank without messages */
    rc = runner.copies();
  if (rc == RESHARD_OK)
    rc = runner.quantize_received();
  return rc;
}

/* run_steps with exchange(step, sends, recvs, ahead). */
template <class Mover, class Exchange>
inline int run_program(const Plan &plan, const RankProgram &p, void *const *src,
                       void *const *dst, uint8_t *staging, Mover &mover,
                       Exchange &&exchange) {
  ProgramRunner<Mover> runner(plan, p, src, dst, staging, mover);
  return run_steps(runner, [&](int64_t step) {
    return exchange(step, runner.sends, runner.recvs, runner.ahead);
  });
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_ENGINE_H */
