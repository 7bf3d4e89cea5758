/*===- CallChecks.h - A plan call's checks and agreement ---------*- C++ -*-===*
 *
 * What a rank checks of its own call (rank, shard pointers, alignment,
 * workspace, overlaps, RESHARD_TIMEOUT_SECONDS, flags) and the agreement
 * that spreads every rank's verdict, so that all ranks fail together or
 * not at all. Error codes: ErrorCodes.h.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_CALLCHECKS_H
#define RESHARD_EXECUTIONENGINE_CALLCHECKS_H

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

#include "reshard/ExecutionEngine/ErrorCodes.h"
#include "reshard/ExecutionEngine/PlanTables.h"
#include "reshard/ExecutionEngine/QuantAreas.h"

namespace reshard {
namespace engine {

inline int fail(char *err, size_t errlen, int code, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

inline size_t workspace_bytes(const Plan &plan, int rank) {
  const RankProgram *p = program(plan, rank);
  return p ? static_cast<size_t>(p->workspace) : 0;
}

/* A blank of the environment variables' values (C locale). */
inline bool is_blank(char c) { return c && std::strchr(" \t\n\v\f\r", c); }

/* RESHARD_TIMEOUT_SECONDS: unset or blank gives 0 (no deadline); else it
 * must be a finite number of seconds above 0 (strtod, so the C locale's
 * decimal point), with nothing after it but blanks. Returns false on
 * anything else ("abc", "0", "-1", "nan", "inf", "2x"), which check_call
 * refuses rather than wait forever. */
inline bool parse_timeout(const char *s, double *seconds) {
  *seconds = 0;
  while (s && is_blank(*s))
    ++s;
  if (!s || !*s)
    return true;
  char *end = 0;
  double v = std::strtod(s, &end);
  while (end && is_blank(*end))
    ++end;
  if (end == s || !end || *end || !std::isfinite(v) || !(v > 0))
    return false;
  *seconds = v;
  return true;
}

/* The deadline of every wait, in seconds (0: none). */
inline double timeout_seconds() {
  double seconds = 0;
  return parse_timeout(std::getenv("RESHARD_TIMEOUT_SECONDS"), &seconds)
             ? seconds
             : 0;
}

inline bool timeout_is_valid() {
  double seconds = 0;
  return parse_timeout(std::getenv("RESHARD_TIMEOUT_SECONDS"), &seconds);
}

/* The MPI backend's `direct_min`; RESHARD_MPI_DIRECT_MIN overrides it
 * (0: no part of its own, every message packed as one). Below about
 * this size a message's handshake costs more than the two copies. */
const int64_t kDirectMin = int64_t(64) << 10;

/* RESHARD_MPI_DIRECT_MIN: unset or blank gives kDirectMin; else a whole
 * number of bytes, 0 to 2^40, with nothing after it but blanks. Returns
 * false on anything else. */
inline bool parse_direct_min(const char *s, int64_t *bytes) {
  *bytes = kDirectMin;
  while (s && is_blank(*s))
    ++s;
  if (!s || !*s)
    return true;
  int64_t v = 0;
  const char *at = s;
  for (; *at >= '0' && *at <= '9' && v <= (int64_t(1) << 40); ++at)
    v = v * 10 + (*at - '0');
  while (is_blank(*at))
    ++at;
  if (at == s || *at || v > (int64_t(1) << 40))
    return false;
  *bytes = v;
  return true;
}

/* A destination or the workspace that shares bytes with another buffer of
 * the call: the run would read what it wrote, or write one over another.
 * Sources may share memory with each other (tied weights). */
inline int check_overlaps(const Plan &plan, int rank, void *const *src,
                          void *const *dst, const void *workspace,
                          int64_t workspace_used, const int64_t *src_bytes,
                          const int64_t *dst_bytes, char *err, size_t errlen) {
  struct Span {
    uintptr_t lo, hi;
    int kind; /* 0 source, 1 destination, 2 workspace */
    int tensor;
  };
  auto overlap = [&](const Span &a, const Span &b) -> int {
    static const char *const kinds[] = {"source", "destination"};
    char names[2][256];
    const Span *both[] = {&a, &b};
    for (int i = 0; i < 2; ++i)
      if (both[i]->kind == 2)
        std::snprintf(names[i], 256, "the workspace");
      else
        std::snprintf(names[i], 256, "the %s shard of tensor %d ('%s')",
                      kinds[both[i]->kind], both[i]->tensor,
                      plan.tensor_names[both[i]->tensor]);
    return fail(err, errlen, RESHARD_ERR_ARGS,
                "%s: rank %d: %s and %s share memory; a destination shard "
                "or the workspace may share no byte with another buffer of "
                "the call",
                plan.name, rank, names[0], names[1]);
  };
  auto by_start = [](const Span &a, const Span &b) { return a.lo < b.lo; };
  /* Kept per thread, so that a call allocates (and faults in) nothing. */
  thread_local std::vector<Span> spans;
  spans.clear();
  /* The sources, then the destinations, each in address order: a
   * framework's buffers usually come in tensor order or its reverse, so
   * each side is checked, reversed or, only otherwise, sorted. Linear in
   * the rank's shards in the usual case. */
  size_t mid = 0;
  for (int k = 0; k < 2; ++k) {
    void *const *ptrs = k ? dst : src;
    const int64_t *bytes = k ? dst_bytes : src_bytes;
    size_t first = spans.size();
    for (int t = 0; ptrs && t < plan.num_tensors; ++t)
      if (ptrs[t] && bytes[t] > 0)
        spans.push_back({reinterpret_cast<uintptr_t>(ptrs[t]),
                         reinterpret_cast<uintptr_t>(ptrs[t]) +
                             static_cast<uintptr_t>(bytes[t]),
                         k, t});
    auto b = spans.begin() + first, e = spans.end();
    typedef std::reverse_iterator<std::vector<Span>::iterator> Back;
    if (std::is_sorted(Back(e), Back(b), by_start)) /* (C++11: no make_) */
      std::reverse(b, e);
    else if (!std::is_sorted(b, e, by_start))
      std::sort(b, e, by_start);
    if (k == 0)
      mid = spans.size();
  }
  /* Sweep both sides merged, in address order: the span reaching
   * furthest so far, and the destination reaching furthest; a pair
   * overlaps with one of them. */
  const Span *far = 0, *far_written = 0;
  for (size_t i = 0, j = mid; i < mid || j < spans.size();) {
    const Span &s = j == spans.size() || (i < mid && spans[i].lo <= spans[j].lo)
                        ? spans[i++]
                        : spans[j++];
    if (far_written && s.lo < far_written->hi)
      return overlap(*far_written, s);
    if (s.kind != 0 && far && s.lo < far->hi)
      return overlap(*far, s);
    if (!far || s.hi > far->hi)
      far = &s;
    if (s.kind != 0 && (!far_written || s.hi > far_written->hi))
      far_written = &s;
  }
  if (workspace && workspace_used > 0) {
    Span ws = {reinterpret_cast<uintptr_t>(workspace),
               reinterpret_cast<uintptr_t>(workspace) +
                   static_cast<uintptr_t>(workspace_used),
               2, -1};
    for (const Span &s : spans)
      if (s.lo < ws.hi && ws.lo < s.hi)
        return overlap(s, ws);
  }
  return RESHARD_OK;
}

/* The GPU's quantizers load a sender's full-precision source elements and
 * a receiver's fp32 scales as words, and keep scales and shadows in the
 * workspace at offsets of kStagingAlign: those shards must be aligned to
 * their elements, and the workspace to kStagingAlign, where this rank
 * quantizes (the same on every backend). */
inline int check_quant_alignment(const Plan &plan, int rank, void *const *src,
                                 void *const *dst, const void *workspace,
                                 char *err, size_t errlen) {
  for (int64_t i = 0; i < plan.num_quant_tensors; ++i) {
    const QuantTensor &q = plan.quant_tensors[i];
    bool receiver = on_receiver(plan, q);
    if (receiver && plan.quant_classes[q.qclass].kind == kQuantMx)
      continue; /* E8M0 scales are bytes */
    int64_t t = receiver ? q.scales : q.payload;
    int64_t align = receiver ? 4 : quant_input_bytes(q.input);
    if (shard_bytes(plan, rank, t, !receiver) <= 0)
      continue; /* no shard here: its pointer may be null */
    void *ptr = receiver ? dst[t] : src[t];
    if (reinterpret_cast<uintptr_t>(ptr) % align != 0)
      return fail(err, errlen, RESHARD_ERR_ARGS,
                  "%s: rank %d: the %s shard of tensor %lld ('%s') is at %p, "
                  "not a multiple of its %lld-byte elements",
                  plan.name, rank, receiver ? "destination" : "source",
                  static_cast<long long>(t), plan.tensor_names[t], ptr,
                  static_cast<long long>(align));
  }
  if (quant_area_bytes(plan, rank) + shadow_area_bytes(plan, rank) > 0 &&
      reinterpret_cast<uintptr_t>(workspace) % kStagingAlign != 0)
    return fail(err, errlen, RESHARD_ERR_WORKSPACE,
                "%s: rank %d: the workspace is at %p, not a multiple of %lld "
                "bytes (this rank quantizes into it)",
                plan.name, rank, workspace,
                static_cast<long long>(kStagingAlign));
  return RESHARD_OK;
}

/* Checks the rank, the shard pointers and the workspace, touching none. */
inline int check_arguments(const Plan &plan, int rank, void *const *src,
                           void *const *dst, const void *workspace,
                           size_t workspace_size, char *err, size_t errlen) {
  if (rank < 0 || rank >= plan.num_ranks)
    return fail(err, errlen, RESHARD_ERR_RANK,
                "%s: rank %d is outside the plan's %d ranks", plan.name, rank,
                plan.num_ranks);
  const RankProgram *p = program(plan, rank);
  if (!p)
    return RESHARD_OK;
  std::vector<int64_t> bytes[2] = {std::vector<int64_t>(plan.num_tensors),
                                   std::vector<int64_t>(plan.num_tensors)};
  for (int side = 0; side < 2; ++side) {
    bool is_src = side == 0;
    void *const *ptrs = is_src ? src : dst;
    shard_table(plan, rank, is_src, bytes[side].data());
    for (int t = 0; t < plan.num_tensors; ++t)
      if (bytes[side][t] > 0 && (!ptrs || !ptrs[t]))
        return fail(err, errlen, RESHARD_ERR_NULL,
                    "%s: rank %d needs the %s shard of tensor %d ('%s', "
                    "%lld bytes) but its pointer is null",
                    plan.name, rank, is_src ? "source" : "destination", t,
                    plan.tensor_names[t],
                    static_cast<long long>(bytes[side][t]));
  }
  if (int rc =
          check_quant_alignment(plan, rank, src, dst, workspace, err, errlen))
    return rc;
  if (p->workspace > 0 && !workspace)
    return fail(err, errlen, RESHARD_ERR_WORKSPACE,
                "%s: rank %d needs a workspace of %lld bytes, got a null "
                "pointer",
                plan.name, rank, static_cast<long long>(p->workspace));
  if (p->workspace > 0 && workspace_size < static_cast<size_t>(p->workspace))
    return fail(err, errlen, RESHARD_ERR_WORKSPACE,
                "%s: rank %d needs a workspace of %lld bytes, got %zu",
                plan.name, rank, static_cast<long long>(p->workspace),
                workspace_size);
  return check_overlaps(plan, rank, src, dst, workspace, p->workspace,
                        bytes[0].data(), bytes[1].data(), err, errlen);
}

/* Checks a call before the agreement. A communicator smaller than the plan
 * fails at once (every rank sees the same size, so all return together);
 * anything else wrong with this rank's call becomes `*verdict`, which the
 * agreement spreads to every rank. `me` is the caller's communicator rank. */
inline int check_call(const Plan &plan, int rank, int me, int comm_size,
                      void *const *src, void *const *dst, const void *workspace,
                      size_t workspace_size, char *err, size_t errlen,
                      int *verdict, const char *rejected = 0,
                      unsigned flags = 0) {
  if (comm_size < plan.num_ranks)
    return fail(err, errlen, RESHARD_ERR_RANK,
                "%s: the communicator has %d ranks, the plan needs %d",
                plan.name, comm_size, plan.num_ranks);
  if (rejected) /* the caller's own checks failed (<plan>_reject) */
    *verdict = fail(err, errlen, RESHARD_ERR_ARGS, "%s: rank %d: %s", plan.name,
                    me, rejected);
  else if (unsigned unknown =
               flags & ~static_cast<unsigned>(RESHARD_RUN_VERIFY))
    *verdict =
        fail(err, errlen, RESHARD_ERR_ARGS,
             "%s: rank %d: unknown run flags 0x%x", plan.name, me, unknown);
  else if (!timeout_is_valid())
    *verdict = fail(err, errlen, RESHARD_ERR_ARGS,
                    "%s: rank %d: RESHARD_TIMEOUT_SECONDS='%.64s' is not a "
                    "number of seconds above 0 (unset it to wait forever)",
                    plan.name, me, std::getenv("RESHARD_TIMEOUT_SECONDS"));
  else if (me != rank)
    *verdict = fail(err, errlen, RESHARD_ERR_RANK,
                    "%s: called as rank %d on communicator rank %d", plan.name,
                    rank, me);
  else if (rank >= plan.num_ranks) /* a larger communicator: nothing to do */
    *verdict = RESHARD_OK;
  else
    *verdict = check_arguments(plan, rank, src, dst, workspace, workspace_size,
                               err, errlen);
  return RESHARD_OK;
}

/* The agreement before any byte moves: every rank contributes
 * (fingerprint, ~fingerprint, "my arguments are bad", flags, ~flags,
 * deadline, ~deadline) to a MAX reduction. Given the reduced words, says
 * what this rank returns: the plans (or the flags, or the deadlines)
 * differ unless both maxima are this rank's own. The deadline is agreed
 * on because a rank without one would wait forever for a peer that gave
 * up on it. */
enum { kAgreementWords = 9 };

inline unsigned long long deadline_bits() {
  double seconds = timeout_seconds();
  unsigned long long bits = 0;
  std::memcpy(&bits, &seconds, sizeof(bits));
  return bits;
}

/* `direct_min`: the MPI backend's RESHARD_MPI_DIRECT_MIN (0 elsewhere);
 * ranks that cut messages differently would mismatch their parts. */
inline void agreement_words(const Plan &plan, int status, unsigned flags,
                            unsigned long long words[kAgreementWords],
                            int64_t direct_min = 0) {
  words[0] = plan.fingerprint;
  words[1] = ~plan.fingerprint;
  words[2] = status ? 1ull : 0ull;
  words[3] = flags;
  words[4] = ~static_cast<unsigned long long>(flags);
  words[5] = deadline_bits();
  words[6] = ~words[5];
  words[7] = static_cast<unsigned long long>(direct_min);
  words[8] = ~words[7];
}

inline int agreement_verdict(const Plan &plan, int rank, int status,
                             unsigned flags,
                             const unsigned long long reduced[kAgreementWords],
                             char *err, size_t errlen, int64_t direct_min = 0) {
  if (reduced[0] != plan.fingerprint || reduced[1] != ~plan.fingerprint)
    return fail(err, errlen, RESHARD_ERR_MISMATCH,
                "%s: rank %d: the ranks run different plans (fingerprint "
                "%016llx here); nothing was moved",
                plan.name, rank,
                static_cast<unsigned long long>(plan.fingerprint));
  if (status)
    return status;
  if (reduced[2])
    return fail(err, errlen, RESHARD_ERR_MISMATCH,
                "%s: rank %d: another rank rejected its arguments; nothing "
                "was moved",
                plan.name, rank);
  if (reduced[3] != flags ||
      reduced[4] != ~static_cast<unsigned long long>(flags))
    return fail(err, errlen, RESHARD_ERR_MISMATCH,
                "%s: rank %d: the ranks disagree on verify (%s here; every "
                "rank must ask for it, or none); nothing was moved",
                plan.name, rank, flags & RESHARD_RUN_VERIFY ? "on" : "off");
  unsigned long long deadline = deadline_bits();
  if (reduced[5] != deadline || reduced[6] != ~deadline)
    return fail(err, errlen, RESHARD_ERR_MISMATCH,
                "%s: rank %d: the ranks disagree on RESHARD_TIMEOUT_SECONDS "
                "(%g s here, 0: unset; every rank must set it alike); "
                "nothing was moved",
                plan.name, rank, timeout_seconds());
  if (reduced[7] != static_cast<unsigned long long>(direct_min) ||
      reduced[8] != ~static_cast<unsigned long long>(direct_min))
    return fail(err, errlen, RESHARD_ERR_MISMATCH,
                "%s: rank %d: the ranks disagree on RESHARD_MPI_DIRECT_MIN "
                "(%lld here; every rank must set it alike); nothing was moved",
                plan.name, rank, static_cast<long long>(direct_min));
  return RESHARD_OK;
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_CALLCHECKS_H */
