/*===- PlanTables.h - The tables of a compiled plan --------------*- C++ -*-===*
 *
 * The plan tables that reshard-compile emits and everything reads (the
 * reshard_rt verifier, the encoder, the C++ emitter, the in-process
 * executor and both backends), and lookups of shards and streams in them.
 * Header-only, C++11, standard library only.
 *
 * A plan does not list pieces. Tensors of one class (shape, element size,
 * both shardings, both mesh shapes) share one list of pieces in mesh
 * coordinates; a group is the tensors of one class between two meshes; an
 * item names one piece of an arithmetic progression of a group's members;
 * a stream is everything one rank sends another in one phase, as a list of
 * items, cut into steps of `quota` bytes from step `start`.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_PLANTABLES_H
#define RESHARD_EXECUTIONENGINE_PLANTABLES_H

#include <cstdint>

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
 * copies items [first_copy, +num_copies), run before the first step (the
 * MPI backend: while the first step's messages move). */
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
  int64_t kind; /* kQuantBlock, kQuantBlockUe8m0 or kQuantMx */
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

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_PLANTABLES_H */
