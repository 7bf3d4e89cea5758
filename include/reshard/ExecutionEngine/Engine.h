/*===- Engine.h - What generated reshard plans run on ----------*- C++ -*-===*
 *
 * Header-only, C++11, no dependencies beyond the standard library: the plan
 * tables that reshard-compile emits (the one owner of their schema: the
 * reshard_rt verifier, the encoder, the C++ emitter, the in-process
 * executor and both backends read these structs), the step walker that
 * turns streams into the messages of each step, the loops that pack,
 * unpack and copy strided boxes, and argument checks. The MPI and NCCL
 * backends (MpiBackend.h, NcclBackend.h) build on it; reshard-proptest runs
 * the same code in one process on every random case
 * (lib/Reference/RuntimeInterpreter.cpp). Error codes: ErrorCodes.h.
 *
 * A plan does not list pieces. Tensors of one class (shape, element size,
 * both shardings, both mesh shapes) share one list of pieces in mesh
 * coordinates; a group is the tensors of one class between two meshes; an
 * item names one piece of an arithmetic progression of a group's members;
 * a stream is everything one rank sends another in one phase, as a list of
 * items, cut into steps of `quota` bytes from step `start`.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_ENGINE_H
#define RESHARD_EXECUTIONENGINE_ENGINE_H

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "reshard/ExecutionEngine/ErrorCodes.h"
#include "reshard/ExecutionEngine/Quantize.h"

namespace reshard {
namespace engine {

/* Variable-length lists live in the plan's `words` pool and are named by
 * their first index there. Box descriptors (in `words`):
 *   pack and unpack: offset, run, n, (count, stride) x n
 *   copy:            src offset, dst offset, run, n,
 *                    (count, src stride, dst stride) x n
 * in bytes, loops outermost first; a box's bytes in packed order are its
 * runs in loop order. */

/* The ranks of a mesh, by row-major linear index. */
struct Mesh {
  int64_t num_ranks;
  int64_t ranks; /* words */
};

/* One piece of a class: the box every destination device of combo
 * `dst_combo` needs, held by every source device of combo `src_combo`. A
 * combo is the row-major index of a device's coordinates on the mesh axes
 * the sharding uses. */
struct Piece {
  int64_t src_combo, dst_combo;
  int64_t bytes;
  int64_t pack;   /* words: the box in the source shard */
  int64_t unpack; /* words: the box in the destination shard */
  int64_t copy;   /* words: both, for a local copy */
};

struct Class {
  int64_t first_piece, num_pieces;     /* pieces, ordered by dst_combo */
  int64_t src_devices, src_combo_of;   /* words: combo of each device */
  int64_t src_combos, src_shard_bytes; /* words: bytes of each combo */
  int64_t dst_devices, dst_combo_of;
  int64_t dst_combos, dst_shard_bytes;
  int64_t ndim;                   /* the tensors' rank */
  int64_t src_shapes, dst_shapes; /* words: ndim extents per combo, in the
                                     order the buffers store their dims */
};

/* The tensors of one class moving between two meshes; member k is tensor
 * words[first_member + k]. */
struct Group {
  int64_t cls, src_mesh, dst_mesh;
  int64_t first_member, num_members;
};

/* Piece `piece` of members start + i * stride, i < count, of `group`. */
struct Item {
  int32_t group, piece, start, stride, count;
};

/* What `sender` sends `receiver` in one phase, the items in order:
 * `quota` bytes a step from step `start`. Phase 0: from its source shards;
 * 1 + r: a relay forwarding from its destination shards (a lane: what
 * holder r sent it, or for r >= the rank count R what holder r - R sent a
 * feeder domain's entry, which forwarded it; with shared lanes r is the first
 * rank of a block of holders; the engine reads it as a name only);
 * kTransitIn + e: from its source
 * shards to a transit, which keeps the bytes and sends them on to rank e one
 * step later in phase kTransitOut + the sender, at the same quota and with the
 * same items. */
struct Stream {
  int32_t sender, receiver;
  int64_t phase;
  int32_t num_items, first_item; /* items (fewer than 2^31 in a plan) */
  int64_t start, quota, bytes;
};

/* The tables store a stream as a row naming its ends and a body holding
 * the rest: streams that differ only in their receiver (a holder sending
 * the same pieces to the replicas of one shard, a relay forwarding them to
 * each rank of its domain that needs them) share one body. Kimi-K2's plan
 * with a relay tree (lanes of 16 ranks) has 248,633 streams and 53,244
 * bodies: 5.1 MB of stream tables instead of 11.9 MB. stream_at() puts a
 * stream together. */
struct StreamBody {
  int64_t phase;
  int64_t start, quota, bytes;
  int32_t num_items, first_item;
};
struct StreamRow {
  int32_t sender, receiver;
  int32_t body; /* stream_bodies (fewer than 2^31 in a plan) */
};

static const int64_t kTransitIn = int64_t(1) << 31;
static const int64_t kTransitOut = int64_t(1) << 32;
inline bool transit_in(const Stream &s) {
  return s.phase >= kTransitIn && s.phase < kTransitOut;
}
inline bool transit_out(const Stream &s) { return s.phase >= kTransitOut; }
/* Packed from the sender's source shards (else from its destination
 * shards, or, for a transit, from what it keeps). */
inline bool packs_source(const Stream &s) {
  return s.phase == 0 || transit_in(s);
}

/* One rank's program: its sends are streams [first_send, +num_sends)
 * (sorted by receiver, then phase), its receives the streams named at
 * words[recvs .. +num_recvs) (sorted by sender, then phase), its local
 * copies items [first_copy, +num_copies), run before the first step. */
struct RankProgram {
  int64_t rank, workspace;
  int64_t first_copy, num_copies;
  int64_t first_send, num_sends;
  int64_t recvs, num_recvs;
  int64_t steps; /* 1 + its last step */
};

/* How the shards of a class of quantized payloads are cut into blocks
 * (docs/Layout.md "Quantized destinations"): the source shards when its
 * tensors are quantized on their senders, the destination shards when on
 * their receivers. */
struct QuantClass {
  int64_t kind; /* kQuantBlock or kQuantMx */
  int64_t ndim;
  int64_t blocks;   /* words: the block size of each dim */
  int64_t segments; /* words: per combo of that side, the words index of
                     * its runs: per dim, a count n then n run lengths
                     * (local order); blocks start at each run's start */
  int64_t side;     /* QuantSide */
};

/* A quantized tensor. On its senders: before the first step each holder
 * computes its source shard's (of `input` values, QuantInput) block
 * scales into its workspace, and the plan moves the FP8 payload as tensor
 * `payload`, quantized from the caller's shard as it is packed or copied
 * (the fused pack), and the scales as tensor `scales`. On its receivers: the
 * plan moves `payload` at full precision into a shadow of each destination
 * shard in the workspace, and after the last step each receiver quantizes its
 * shadow into the caller's payload and scales shards; `scales` then moves
 * nothing (an identity on the destination mesh whose copies are skipped).
 * Either way the scales have no source buffer. */
struct QuantTensor {
  int32_t payload, scales, input, qclass;
};

struct Plan {
  const char *name;
  uint64_t fingerprint;
  int num_ranks;
  int num_tensors;
  const char *const *tensor_names;
  const char *const *tensor_dtypes; /* interchange names (bf16, ...) */
  const int64_t *tensor_group;      /* num_tensors entries */
  const Mesh *meshes;
  int64_t num_meshes;
  const Class *classes;
  int64_t num_classes;
  const Piece *pieces;
  int64_t num_pieces;
  const Group *groups;
  int64_t num_groups;
  const Item *items;
  int64_t num_items;
  const StreamRow *streams; /* sorted by sender, receiver, phase */
  int64_t num_streams;
  const StreamBody *stream_bodies;
  int64_t num_stream_bodies;
  const RankProgram *programs;
  int64_t num_programs;
  const int32_t *program_of_rank; /* num_ranks entries; -1: nothing to do */
  const int64_t *words;
  int64_t num_words;
  int64_t staging_budget; /* 0: none stated */
  int64_t max_ops_per_step;
  int64_t max_steps;      /* over all ranks */
  int64_t receives_ahead; /* 1: the MPI backend posts each step's next
                           * receives while the step is in flight */
  /* Quantized destinations; all null and 0 when there are none. */
  const QuantClass *quant_classes;
  int64_t num_quant_classes;
  const QuantTensor *quant_tensors;
  int64_t num_quant_tensors;
  const int32_t *tensor_quant; /* num_tensors entries: a quant_tensors
                                * index, or -1 */
};

/* The quantization record `tensor` takes part in (null: none), and
 * whether it is the record's scales. */
inline const QuantTensor *quant_of(const Plan &plan, int64_t tensor,
                                   bool *is_scales) {
  if (!plan.tensor_quant || tensor < 0 || tensor >= plan.num_tensors ||
      plan.tensor_quant[tensor] < 0)
    return 0;
  const QuantTensor *q = &plan.quant_tensors[plan.tensor_quant[tensor]];
  *is_scales = q->scales == tensor;
  return q;
}

inline bool on_receiver(const Plan &plan, const QuantTensor &q) {
  return plan.quant_classes[q.qclass].side == kQuantOnReceiver;
}

/* Whether `tensor` is the scales of a tensor quantized on its receivers:
 * nothing moves it, the receivers' quantizer writes it. */
inline bool receiver_scales(const Plan &plan, int64_t tensor) {
  bool is_scales = false;
  const QuantTensor *q = quant_of(plan, tensor, &is_scales);
  return q && is_scales && on_receiver(plan, *q);
}

/* The caller's shard bytes of `tensor` given `b`, the bytes of its class's
 * shard: a payload quantized on its senders is held at full precision, one
 * quantized on its receivers lands as FP8 (1-byte elements), and scales
 * have no source buffer (-1). */
inline int64_t caller_bytes(const Plan &plan, int64_t tensor, bool src,
                            int64_t b) {
  bool is_scales = false;
  const QuantTensor *q = quant_of(plan, tensor, &is_scales);
  if (!q)
    return b;
  if (is_scales)
    return src ? -1 : b;
  bool receiver = on_receiver(plan, *q);
  if (src)
    return receiver ? b : b * quant_input_bytes(q->input);
  return receiver ? b / quant_input_bytes(q->input) : b;
}

/* Staging is laid out per step: sends, then receives, each message at a
 * multiple of this. */
const int64_t kStagingAlign = 16;
/* Tensor ranks, hence descriptor loops, stay below this. */
const int kMaxLoops = 64;

inline int64_t align_up(int64_t x) {
  return (x + kStagingAlign - 1) / kStagingAlign * kStagingAlign;
}

inline int64_t stream_steps(const Stream &s) {
  return s.bytes <= 0 ? 0 : s.bytes / s.quota + (s.bytes % s.quota != 0);
}

inline const RankProgram *program(const Plan &plan, int rank) {
  if (rank < 0 || rank >= plan.num_ranks)
    return 0;
  int32_t p = plan.program_of_rank[rank];
  return p < 0 ? 0 : &plan.programs[p];
}

inline Stream stream_at(const Plan &plan, int64_t i) {
  const StreamRow &r = plan.streams[i];
  const StreamBody &b = plan.stream_bodies[r.body];
  Stream s = {r.sender,     r.receiver, b.phase, b.num_items,
              b.first_item, b.start,    b.quota, b.bytes};
  return s;
}

inline Stream recv_stream(const Plan &plan, const RankProgram &p, int64_t i) {
  return stream_at(plan, plan.words[p.recvs + i]);
}

inline int64_t member_tensor(const Plan &plan, const Group &g, int64_t k) {
  return plan.words[g.first_member + k];
}

/* The linear index of `rank` in `mesh`, or -1. */
inline int64_t linear_of(const Plan &plan, const Mesh &mesh, int64_t rank) {
  for (int64_t i = 0; i < mesh.num_ranks; ++i)
    if (plan.words[mesh.ranks + i] == rank)
      return i;
  return -1;
}

/* Bytes of `rank`'s source (or destination) shard of every tensor into
 * `bytes` (num_tensors entries): -1 where the rank is not in that side's
 * mesh. */
inline void shard_table(const Plan &plan, int64_t rank, bool src,
                        int64_t *bytes) {
  for (int t = 0; t < plan.num_tensors; ++t)
    bytes[t] = -1;
  for (int64_t gi = 0; gi < plan.num_groups; ++gi) {
    const Group &g = plan.groups[gi];
    const Class &c = plan.classes[g.cls];
    int64_t l =
        linear_of(plan, plan.meshes[src ? g.src_mesh : g.dst_mesh], rank);
    if (l < 0)
      continue;
    int64_t combo = plan.words[(src ? c.src_combo_of : c.dst_combo_of) + l];
    int64_t b =
        plan.words[(src ? c.src_shard_bytes : c.dst_shard_bytes) + combo];
    for (int64_t k = 0; k < g.num_members; ++k) {
      int64_t t = member_tensor(plan, g, k);
      bytes[t] = caller_bytes(plan, t, src, b);
    }
  }
}

/* The combo of `rank` in one side of `tensor`'s class (in `*cls`), or -1
 * where the rank is not in that side's mesh or there is no such tensor. */
inline int64_t shard_combo(const Plan &plan, int64_t rank, int64_t tensor,
                           bool src, const Class **cls) {
  if (tensor < 0 || tensor >= plan.num_tensors)
    return -1;
  const Group &g = plan.groups[plan.tensor_group[tensor]];
  *cls = &plan.classes[g.cls];
  int64_t l = linear_of(plan, plan.meshes[src ? g.src_mesh : g.dst_mesh], rank);
  if (l < 0)
    return -1;
  return plan.words[(src ? (*cls)->src_combo_of : (*cls)->dst_combo_of) + l];
}

/* Bytes of one shard, as shard_table says. */
inline int64_t shard_bytes(const Plan &plan, int64_t rank, int64_t tensor,
                           bool src) {
  const Class *c = 0;
  int64_t combo = shard_combo(plan, rank, tensor, src, &c);
  if (combo < 0)
    return -1;
  int64_t b =
      plan.words[(src ? c->src_shard_bytes : c->dst_shard_bytes) + combo];
  return caller_bytes(plan, tensor, src, b);
}

/* The dtype of the caller's source shards of `tensor`: its own, but the
 * full-precision type of a quantized payload, and null for its scales
 * (they have no source buffer) or when the plan states none. */
inline const char *source_dtype(const Plan &plan, int64_t tensor) {
  if (tensor < 0 || tensor >= plan.num_tensors || !plan.tensor_dtypes)
    return 0;
  bool is_scales = false;
  const QuantTensor *q = quant_of(plan, tensor, &is_scales);
  if (!q)
    return plan.tensor_dtypes[tensor];
  static const char *const inputs[] = {"fp32", "bf16", "fp16"};
  return is_scales ? 0 : inputs[q->input];
}

/* The rank of `tensor` (-1: no such tensor). */
inline int64_t tensor_ndim(const Plan &plan, int64_t tensor) {
  if (tensor < 0 || tensor >= plan.num_tensors)
    return -1;
  return plan.classes[plan.groups[plan.tensor_group[tensor]].cls].ndim;
}

/* The shard shape of `rank` for `tensor` into `dims` (tensor_ndim
 * entries; may be null): returns the ndim, or -1 where the rank is not in
 * that side's mesh or there is no such tensor. */
inline int64_t shard_shape(const Plan &plan, int64_t rank, int64_t tensor,
                           bool src, int64_t *dims) {
  const Class *c = 0;
  int64_t combo = shard_combo(plan, rank, tensor, src, &c);
  bool is_scales = false;
  if (combo < 0 || (src && quant_of(plan, tensor, &is_scales) && is_scales))
    return -1;
  const int64_t *shape =
      plan.words + (src ? c->src_shapes : c->dst_shapes) + combo * c->ndim;
  for (int64_t d = 0; dims && d < c->ndim; ++d)
    dims[d] = shape[d];
  return c->ndim;
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

/* RESHARD_TIMEOUT_SECONDS: unset or blank gives 0 (no deadline); else it
 * must be a finite number of seconds above 0 (strtod, so the C locale's
 * decimal point), with nothing after it but blanks. Returns false on
 * anything else ("abc", "0", "-1", "nan", "inf", "2x"), which check_call
 * refuses rather than wait forever. */
inline bool parse_timeout(const char *s, double *seconds) {
  auto blank = [](char c) { return c && std::strchr(" \t\n\v\f\r", c); };
  *seconds = 0;
  while (s && blank(*s))
    ++s;
  if (!s || !*s)
    return true;
  char *end = 0;
  double v = std::strtod(s, &end);
  while (end && blank(*end))
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

/* The alignment the quantizers need of a rank's shards and workspace
 * (defined with the quantized areas below). */
inline int check_quant_alignment(const Plan &plan, int rank, void *const *src,
                                 void *const *dst, const void *workspace,
                                 char *err, size_t errlen);

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
enum { kAgreementWords = 7 };

inline unsigned long long deadline_bits() {
  double seconds = timeout_seconds();
  unsigned long long bits = 0;
  std::memcpy(&bits, &seconds, sizeof(bits));
  return bits;
}

inline void agreement_words(const Plan &plan, int status, unsigned flags,
                            unsigned long long words[kAgreementWords]) {
  words[0] = plan.fingerprint;
  words[1] = ~plan.fingerprint;
  words[2] = status ? 1ull : 0ull;
  words[3] = flags;
  words[4] = ~static_cast<unsigned long long>(flags);
  words[5] = deadline_bits();
  words[6] = ~words[5];
}

inline int agreement_verdict(const Plan &plan, int rank, int status,
                             unsigned flags,
                             const unsigned long long reduced[kAgreementWords],
                             char *err, size_t errlen) {
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
  return RESHARD_OK;
}

/*===-- Boxes -------------------------------------------------------------===*/

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

/* Host loops: bytes [lo, hi) of the box in packed order, from `base` into
 * `out` (pack) or from `in` into `base` (unpack). */
inline void pack_range(const int64_t *d, const uint8_t *base, int64_t lo,
                       int64_t hi, uint8_t *out) {
  int64_t at = 0;
  for_each_subbox(
      d, lo, hi,
      [&](int64_t off, int64_t run, const int64_t *loops, int64_t n) {
        for_each_run(loops, n, 2, 1, 0, off, 0, [&](int64_t o, int64_t) {
          std::memcpy(out + at, base + o, run);
          at += run;
        });
      });
}

inline void unpack_range(const int64_t *d, uint8_t *base, int64_t lo,
                         int64_t hi, const uint8_t *in) {
  int64_t at = 0;
  for_each_subbox(
      d, lo, hi,
      [&](int64_t off, int64_t run, const int64_t *loops, int64_t n) {
        for_each_run(loops, n, 2, 1, 0, off, 0, [&](int64_t o, int64_t) {
          std::memcpy(base + o, in + at, run);
          at += run;
        });
      });
}

/* A local copy (copy descriptor `d`) from one shard to another. */
inline void copy_box(const int64_t *d, const uint8_t *src, uint8_t *dst) {
  int64_t run = d[2];
  for_each_run(d + 4, d[3], 3, 1, 2, d[0], d[1], [&](int64_t a, int64_t b) {
    std::memcpy(dst + b, src + a, run);
  });
}

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
    const Stream s =
        send ? stream_at(plan, p.first_send + i) : recv_stream(plan, p, i);
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
      const Stream s =
          send ? stream_at(plan, p.first_send + i) : recv_stream(plan, p, i);
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
    for_each_subbox(
        d, lo, hi,
        [&](int64_t off, int64_t run, const int64_t *loops, int64_t n) {
          for_each_run(loops, n, 2, 1, 0, off, 0, [&](int64_t o, int64_t) {
            quantize_elements(q, o, run, out);
            out += run;
          });
        });
    return 0;
  }
};

/*===-- Quantized sources -------------------------------------------------===*/

/* The block cut points of one dim of a shard from its runs record (a
 * count, then the run lengths in local order): each run's start, then
 * every `block`, and the end. Returns the record's next dim. */
inline const int64_t *quant_cuts(const int64_t *runs, int64_t block,
                                 std::vector<int64_t> &cuts) {
  int64_t n = *runs++, local = 0;
  cuts.assign(1, 0);
  for (int64_t r = 0; r < n; ++r) {
    int64_t len = *runs++;
    for (int64_t i = block; i < len; i += block)
      cuts.push_back(local + i);
    local += len;
    if (len > 0)
      cuts.push_back(local);
  }
  return runs;
}

/* Calls f(record, payload combo, payload bytes, scale bytes) for every
 * quantized tensor whose source shard `rank` holds, in record order. */
template <class F>
inline void for_each_quantized_source(const Plan &plan, int64_t rank, F &&f) {
  for (int64_t i = 0; i < plan.num_quant_tensors; ++i) {
    const QuantTensor &q = plan.quant_tensors[i];
    if (on_receiver(plan, q))
      continue;
    const Class *pc = 0, *sc = 0;
    int64_t combo = shard_combo(plan, rank, q.payload, true, &pc);
    int64_t scombo = shard_combo(plan, rank, q.scales, true, &sc);
    if (combo < 0 || scombo < 0)
      continue;
    f(q, combo, plan.words[pc->src_shard_bytes + combo],
      plan.words[sc->src_shard_bytes + scombo]);
  }
}

/* The host memory a rank's quantized sources take quantized whole
 * (quantize_sources without `fused`: payload then scales of each,
 * aligned), or, with `fused`, the workspace they take: their scales only,
 * at the end of the workspace after the staging (the fused pack quantizes
 * the payload from the caller's shard). */
inline int64_t quant_area_bytes(const Plan &plan, int64_t rank,
                                bool fused = true) {
  struct Sum {
    bool fused;
    int64_t total;
    void operator()(const QuantTensor &, int64_t, int64_t payload,
                    int64_t scales) {
      total += (fused ? 0 : align_up(payload)) + align_up(scales);
    }
  } sum = {fused, 0};
  for_each_quantized_source(plan, rank, sum);
  return sum.total;
}

/* Calls f(record, payload combo, shadow bytes) for every tensor quantized
 * on its receivers whose destination shard `rank` holds, in record order:
 * the shadow is that shard at full precision. */
template <class F>
inline void for_each_quantized_destination(const Plan &plan, int64_t rank,
                                           F &&f) {
  for (int64_t i = 0; i < plan.num_quant_tensors; ++i) {
    const QuantTensor &q = plan.quant_tensors[i];
    const Class *pc = 0;
    int64_t combo = on_receiver(plan, q)
                        ? shard_combo(plan, rank, q.payload, false, &pc)
                        : -1;
    if (combo >= 0)
      f(q, combo, plan.words[pc->dst_shard_bytes + combo]);
  }
}

/* The workspace a rank's shadows take, aligned. It sits after the
 * quantized sources. */
inline int64_t shadow_area_bytes(const Plan &plan, int64_t rank) {
  struct Sum {
    int64_t total;
    void operator()(const QuantTensor &, int64_t, int64_t shadow) {
      total += align_up(shadow);
    }
  } sum = {0};
  for_each_quantized_destination(plan, rank, sum);
  return sum.total;
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

/* The whole workspace of a rank: its largest step's staging, what it
 * keeps as a transit, its quantized sources' scales and its shadows. */
inline int64_t program_workspace(const Plan &plan, const RankProgram &p) {
  return rank_workspace(plan, p) + carry_area_bytes(plan, p) +
         quant_area_bytes(plan, p.rank) + shadow_area_bytes(plan, p.rank);
}

/* Points `dsts` (a copy of the caller's destination pointers) at the
 * shadows in `area` (shadow_area_bytes: the end of the workspace). */
inline void point_at_shadows(const Plan &plan, int64_t rank, uint8_t *area,
                             std::vector<void *> &dsts) {
  struct Point {
    uint8_t *at;
    std::vector<void *> &dsts;
    void operator()(const QuantTensor &q, int64_t, int64_t shadow) {
      dsts[q.payload] = at;
      at += align_up(shadow);
    }
  } f = {area, dsts};
  for_each_quantized_destination(plan, rank, f);
}

/* One shard of a quantized payload as the quantizer sees it: its blocks
 * (per dim the cut points, and the plan's compact runs record for the
 * device), its values and its scales. The fused pack quantizes a payload
 * its senders quantize from this, as it packs. Not copyable: `host()`
 * points into it. */
struct QuantizedSource {
  int kind, input;
  int64_t ndim;
  const int64_t *shape, *blocks, *runs; /* the plan's words */
  std::vector<std::vector<int64_t>> cuts;
  std::vector<const int64_t *> cut_ptrs;
  std::vector<int64_t> nblocks;
  const void *in;
  void *scales;

  QuantizedSource(const Plan &plan, const QuantTensor &q, int64_t combo,
                  const void *in, void *scales)
      : in(in), scales(scales) {
    const QuantClass &qc = plan.quant_classes[q.qclass];
    const Class &c =
        plan.classes[plan.groups[plan.tensor_group[q.payload]].cls];
    kind = static_cast<int>(qc.kind);
    input = q.input;
    ndim = c.ndim;
    shape = plan.words +
            (qc.side == kQuantOnReceiver ? c.dst_shapes : c.src_shapes) +
            combo * c.ndim;
    blocks = plan.words + qc.blocks;
    runs = plan.words + plan.words[qc.segments + combo];
    cuts.resize(ndim);
    cut_ptrs.resize(ndim);
    nblocks.resize(ndim);
    const int64_t *at = runs;
    for (int64_t d = 0; d < ndim; ++d) {
      at = quant_cuts(at, blocks[d], cuts[d]);
      nblocks[d] = static_cast<int64_t>(cuts[d].size()) - 1;
      cut_ptrs[d] = cuts[d].data();
    }
  }
  ShardBlocks blocks_of() const {
    ShardBlocks sb = {ndim, shape, nblocks.data(), ndim ? cut_ptrs.data() : 0};
    return sb;
  }
  QuantSource host() const {
    QuantSource s = {kind, input, blocks_of(), in, scales};
    return s;
  }

private:
  QuantizedSource(const QuantizedSource &);
  QuantizedSource &operator=(const QuantizedSource &);
};

/* Quantizes one shard of `q`'s payload, its combo `combo` on the side
 * that quantizes, from `in` into `out` (null: the scales only) and
 * `scales`: the runs record gives the block cut points per dim. */
template <class Mover>
inline int quantize_shard(const QuantizedSource &s, uint8_t *out,
                          Mover &mover) {
  return mover.quantize(s.kind, s.input, s.blocks_of(), s.blocks, s.runs, s.in,
                        out, s.scales);
}

/* Quantizes every shadow of `p`'s rank (at `shadows`, as point_at_shadows
 * laid them out) into the caller's payload and scales shards `dst`. */
template <class Mover>
inline int quantize_shadows(const Plan &plan, const RankProgram &p,
                            uint8_t *shadows, void *const *dst, Mover &mover) {
  struct Quantize {
    const Plan &plan;
    uint8_t *at;
    void *const *dst;
    Mover &mover;
    int rc;
    void operator()(const QuantTensor &q, int64_t combo, int64_t shadow) {
      if (rc == RESHARD_OK && shadow > 0)
        rc = quantize_shard(QuantizedSource(plan, q, combo, at, dst[q.scales]),
                            static_cast<uint8_t *>(dst[q.payload]), mover);
      at += align_up(shadow);
    }
  } f = {plan, shadows, dst, mover, RESHARD_OK};
  for_each_quantized_destination(plan, p.rank, f);
  return f.rc;
}

/* The fused pack's sources, per tensor (null: not a payload this rank
 * quantizes as it packs). */
typedef std::vector<std::unique_ptr<QuantizedSource>> FusedSources;

/* Quantizes every source shard of a quantized tensor that `p`'s rank holds
 * into `area` (quant_area_bytes(..., false)), and points `srcs` (a copy of
 * the caller's source pointers) at the payload and scales there. The
 * mover's quantize() does the arithmetic. With `fused` only the scales
 * are computed, into `area` (quant_area_bytes: the end of the workspace):
 * the payloads stay the caller's full-precision shards, and `fused` says
 * how to quantize them as they are packed. */
template <class Mover>
inline int quantize_sources(const Plan &plan, const RankProgram &p,
                            uint8_t *area, std::vector<void *> &srcs,
                            Mover &mover, FusedSources *fused = 0) {
  struct Quantize {
    const Plan &plan;
    uint8_t *at;
    std::vector<void *> &srcs;
    Mover &mover;
    FusedSources *fused;
    int rc;
    void operator()(const QuantTensor &q, int64_t combo, int64_t payload,
                    int64_t scales) {
      uint8_t *scale_at = fused ? at : at + align_up(payload);
      if (rc == RESHARD_OK && payload > 0 && srcs[q.payload]) {
        std::unique_ptr<QuantizedSource> s(
            new QuantizedSource(plan, q, combo, srcs[q.payload], scale_at));
        rc = quantize_shard(*s, fused ? 0 : at, mover);
        if (fused)
          (*fused)[q.payload] = std::move(s);
      }
      if (!fused)
        srcs[q.payload] = at;
      srcs[q.scales] = scale_at;
      at = scale_at + align_up(scales);
    }
  } f = {plan, area, srcs, mover, fused, RESHARD_OK};
  for_each_quantized_source(plan, p.rank, f);
  return f.rc;
}

/* One rank's program, a step at a time: the local copies, then per step
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
        cursors(p.num_sends + p.num_recvs) {
    /* Workspace: staging | carry | source scales | shadows. */
    carryBase = shadows() - quant_area_bytes(plan, p.rank) -
                carry_area_bytes(plan, p, &carryAt);
    area = carryBase - staging;
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

  int copies() {
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
            this, packs_source(s) ? src : dst, out, 0, &rc, packs_source(s)};
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
        Segments<false> seg = {this, dst, 0, in, &rc, false};
        for_each_segment(plan, s, cursors[p.num_sends + i], hi - lo, seg);
        in = seg.in;
      }
    }
    return rc;
  }

  std::vector<Message> sends, recvs, ahead;

private:
  /* The callback of for_each_segment (C++11 has no generic lambdas). */
  template <bool Pack> struct Segments {
    ProgramRunner *self;
    void *const *buffers;
    uint8_t *out;
    const uint8_t *in;
    int *rc;
    bool fromSource;
    void operator()(int64_t t, const Piece &piece, int64_t a, int64_t b) {
      const int64_t *box =
          self->plan.words + (fromSource ? piece.pack : piece.unpack);
      if (*rc == RESHARD_OK && Pack && fromSource && self->quantizes(t))
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
  std::vector<Cursor> cursors;
  std::vector<int64_t> carryAt; /* per receive (transit_in) */
  uint8_t *carryBase;
  int64_t area; /* the staging area's bytes */
};

/* Runs one rank's program with exchange(step, sends, recvs, ahead) as the
 * transport: post and complete every message of the step (0 or an error
 * code); it may post `ahead`, the next step's receives, before the step
 * completes (their staging is reserved), and then must not post them
 * again in that step. */
template <class Mover, class Exchange>
inline int run_program(const Plan &plan, const RankProgram &p, void *const *src,
                       void *const *dst, uint8_t *staging, Mover &mover,
                       Exchange &&exchange) {
  ProgramRunner<Mover> runner(plan, p, src, dst, staging, mover);
  int rc = runner.quantize();
  if (rc == RESHARD_OK)
    rc = runner.copies();
  for (int64_t step = 0; rc == RESHARD_OK && step < p.steps; ++step) {
    if ((rc = runner.pack(step)))
      break;
    if (runner.sends.empty() && runner.recvs.empty())
      continue;
    if ((rc = exchange(step, runner.sends, runner.recvs, runner.ahead)))
      break;
    rc = runner.unpack(step);
  }
  if (rc == RESHARD_OK)
    rc = runner.quantize_received();
  return rc;
}

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_ENGINE_H */
