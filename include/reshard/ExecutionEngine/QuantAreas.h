/*===- QuantAreas.h - Quantized shards in the workspace ----------*- C++ -*-===*
 *
 * Where a rank's quantized sources' scales and its shadows (destinations
 * quantized on receipt, held at full precision until the last step) sit in
 * its workspace, and the loops that quantize them through a mover's
 * quantize() (docs/Layout.md "Quantized destinations").
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_QUANTAREAS_H
#define RESHARD_EXECUTIONENGINE_QUANTAREAS_H

#include <cstdint>
#include <memory>
#include <vector>

#include "reshard/ExecutionEngine/ErrorCodes.h"
#include "reshard/ExecutionEngine/PlanTables.h"
#include "reshard/ExecutionEngine/Quantize.h"
#include "reshard/ExecutionEngine/Steps.h"

namespace reshard {
namespace engine {

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

} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_QUANTAREAS_H */
