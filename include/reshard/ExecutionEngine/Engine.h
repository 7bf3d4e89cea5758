/*===- Engine.h - What generated reshard plans run on ----------*- C++ -*-===*
 *
 * Header-only, C++11, no dependencies: the plan tables that
 * reshard-translate emits, the descriptor loops that pack, unpack and copy
 * strided boxes, and argument checks. The MPI and NCCL backends
 * (MpiBackend.h, NcclBackend.h) build on it; the in-process executor that
 * reshard-proptest runs on every random case
 * (lib/Reference/RuntimeInterpreter.cpp) uses the same loops, so the suite
 * checks the code that ships. Error codes: ErrorCodes.h.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_ENGINE_H
#define RESHARD_EXECUTIONENGINE_ENGINE_H

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "reshard/ExecutionEngine/ErrorCodes.h"

namespace reshard {
namespace engine {

/* One rank's program. `steps` is a flat table: per step
 *   index, number of sends, number of receives, then per message
 *   peer, bytes, staging offset, descriptor length, descriptors...
 * (sends first). Box descriptors: tensor, buffer (0 src, 1 dst), offset,
 * run, n, (count, stride) x n. Copy descriptors: tensor, src offset, dst
 * offset, run, n, (count, src stride, dst stride) x n.
 * `shards` holds (tensor, source bytes, destination bytes) for each tensor
 * whose source or destination mesh holds the rank, ascending by tensor;
 * -1 means not in that mesh. It is sparse because a pipeline stage's rank
 * is in few tensors' meshes: dense per-tensor rows made 90% of a
 * whole-model plan's object. */
struct RankProgram {
  int64_t rank;
  int64_t workspace;
  const int64_t *shards;
  int64_t shards_len; /* entries of 3 words */
  const int64_t *copies;
  int64_t copies_len;
  const int64_t *steps;
  int64_t steps_len;
};

struct Plan {
  const char *name;
  uint64_t fingerprint;
  int num_ranks;
  int num_tensors;
  const char *const *tensor_names;
  const RankProgram *programs;
  int num_programs;
  const int32_t *program_of_rank; /* num_ranks entries; -1: nothing to do */
  int64_t max_steps;              /* 1 + the largest step index */
};

inline const RankProgram *program(const Plan &plan, int rank) {
  if (rank < 0 || rank >= plan.num_ranks)
    return 0;
  int32_t p = plan.program_of_rank[rank];
  return p < 0 ? 0 : &plan.programs[p];
}

/* Bytes of the source (or destination) shard of `tensor` in a `shards`
 * table of `len` (tensor, source bytes, destination bytes) entries sorted by
 * tensor; -1 when the tensor is not listed. The reshard_rt.rank op answers
 * from the same table. */
inline int64_t find_shard_bytes(const int64_t *shards, int64_t len,
                                int64_t tensor, bool src) {
  int64_t lo = 0, hi = len;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if (shards[3 * mid] < tensor)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == len || shards[3 * lo] != tensor)
    return -1;
  return shards[3 * lo + (src ? 1 : 2)];
}

/* Bytes of the rank's source (or destination) shard of `tensor`; -1 when
 * the rank is not in that mesh, or has no program. */
inline int64_t shard_bytes(const RankProgram *p, int64_t tensor, bool src) {
  return p ? find_shard_bytes(p->shards, p->shards_len, tensor, src) : -1;
}

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
  for (int64_t i = 0; i < p->shards_len; ++i) {
    const int64_t *e = p->shards + 3 * i;
    int t = static_cast<int>(e[0]);
    if (e[1] > 0 && (!src || !src[t]))
      return fail(err, errlen, RESHARD_ERR_NULL,
                  "%s: rank %d needs the source shard of tensor %d ('%s', "
                  "%lld bytes) but its pointer is null",
                  plan.name, rank, t, plan.tensor_names[t],
                  static_cast<long long>(e[1]));
    if (e[2] > 0 && (!dst || !dst[t]))
      return fail(err, errlen, RESHARD_ERR_NULL,
                  "%s: rank %d needs the destination shard of tensor %d "
                  "('%s', %lld bytes) but its pointer is null",
                  plan.name, rank, t, plan.tensor_names[t],
                  static_cast<long long>(e[2]));
  }
  if (p->workspace > 0 &&
      (!workspace || workspace_size < static_cast<size_t>(p->workspace)))
    return fail(err, errlen, RESHARD_ERR_WORKSPACE,
                "%s: rank %d needs a workspace of %lld bytes, got %zu%s",
                plan.name, rank, static_cast<long long>(p->workspace),
                workspace_size, workspace ? "" : " (null)");
  return RESHARD_OK;
}

/* Checks a call before the agreement. A communicator smaller than the plan
 * fails at once (every rank sees the same size, so all return together);
 * anything else wrong with this rank's call becomes `*verdict`, which the
 * agreement spreads to every rank. `me` is the caller's communicator rank. */
inline int check_call(const Plan &plan, int rank, int me, int comm_size,
                      void *const *src, void *const *dst, const void *workspace,
                      size_t workspace_size, char *err, size_t errlen,
                      int *verdict) {
  if (comm_size < plan.num_ranks)
    return fail(err, errlen, RESHARD_ERR_RANK,
                "%s: the communicator has %d ranks, the plan needs %d",
                plan.name, comm_size, plan.num_ranks);
  if (me != rank)
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
 * (fingerprint, ~fingerprint, "my arguments are bad") to a MAX reduction.
 * Given the reduced words, says what this rank returns: the plans differ
 * unless both maxima are this rank's own values. */
inline void agreement_words(const Plan &plan, int status,
                            unsigned long long words[3]) {
  words[0] = plan.fingerprint;
  words[1] = ~plan.fingerprint;
  words[2] = status ? 1ull : 0ull;
}

inline int agreement_verdict(const Plan &plan, int rank, int status,
                             const unsigned long long reduced[3], char *err,
                             size_t errlen) {
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
  return RESHARD_OK;
}

inline int64_t box_length(const int64_t *d) { return 5 + 2 * d[4]; }
inline int64_t copy_length(const int64_t *d) { return 5 + 3 * d[4]; }

inline int64_t box_bytes(const int64_t *d) {
  int64_t n = d[3];
  for (int64_t i = 0; i < d[4]; ++i)
    n *= d[5 + 2 * i];
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

inline uint8_t *buffer(const int64_t *d, void *const *src, void *const *dst) {
  return static_cast<uint8_t *>(d[1] == 0 ? src[d[0]] : dst[d[0]]);
}

/* Host loops: pack one box into `out`, returning the bytes written. */
inline int64_t pack_box(const int64_t *d, void *const *src, void *const *dst,
                        uint8_t *out) {
  const uint8_t *base = buffer(d, src, dst);
  int64_t run = d[3], at = 0;
  for_each_run(d + 5, d[4], 2, 1, 0, d[2], 0, [&](int64_t off, int64_t) {
    std::memcpy(out + at, base + off, run);
    at += run;
  });
  return at;
}

inline int64_t unpack_box(const int64_t *d, void *const *dst,
                          const uint8_t *in) {
  uint8_t *base = static_cast<uint8_t *>(dst[d[0]]);
  int64_t run = d[3], at = 0;
  for_each_run(d + 5, d[4], 2, 1, 0, d[2], 0, [&](int64_t off, int64_t) {
    std::memcpy(base + off, in + at, run);
    at += run;
  });
  return at;
}

inline void copy_boxes(const RankProgram &p, void *const *src,
                       void *const *dst) {
  for (int64_t i = 0; i < p.copies_len; i += copy_length(p.copies + i)) {
    const int64_t *d = p.copies + i;
    const uint8_t *s = static_cast<const uint8_t *>(src[d[0]]);
    uint8_t *t = static_cast<uint8_t *>(dst[d[0]]);
    int64_t run = d[3];
    for_each_run(d + 5, d[4], 3, 1, 2, d[1], d[2],
                 [&](int64_t a, int64_t b) { std::memcpy(t + b, s + a, run); });
  }
}

/* A message of a step, decoded from the flat table. */
struct Message {
  int64_t peer, bytes, staging, desc_len;
  const int64_t *desc;
};

/* Walks a rank's steps: for each, calls on_step(index, sends, nsend, recvs,
 * nrecv) with the messages decoded into `scratch` (sized by the caller to
 * hold the most messages of any step). Returns the first non-zero code. */
template <class F>
inline int for_each_step(const RankProgram &p, Message *scratch, F &&on_step) {
  const int64_t *at = p.steps, *end = p.steps + p.steps_len;
  while (at < end) {
    int64_t index = at[0], nsend = at[1], nrecv = at[2];
    at += 3;
    for (int64_t m = 0; m < nsend + nrecv; ++m) {
      scratch[m].peer = at[0];
      scratch[m].bytes = at[1];
      scratch[m].staging = at[2];
      scratch[m].desc_len = at[3];
      scratch[m].desc = at + 4;
      at += 4 + at[3];
    }
    int rc = on_step(index, scratch, nsend, scratch + nsend, nrecv);
    if (rc)
      return rc;
  }
  return RESHARD_OK;
}

inline int64_t max_messages(const RankProgram &p) {
  int64_t most = 0;
  const int64_t *at = p.steps, *end = p.steps + p.steps_len;
  while (at < end) {
    int64_t n = at[1] + at[2];
    most = n > most ? n : most;
    at += 3;
    for (int64_t m = 0; m < n; ++m)
      at += 4 + at[3];
  }
  return most;
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_ENGINE_H */
