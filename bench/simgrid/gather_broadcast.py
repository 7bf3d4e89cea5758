"""Flows of the gather-broadcast refit baseline, from a layout JSON.

The baseline is not a plan the compiler emits, only a reference: per tensor,
the lowest source rank (the root) gathers every distinct shard it lacks from
the lowest rank holding it (phase 0), then the full tensor goes to every
destination rank (phase 1). Two models of phase 1:

  p2p   the root sends the full tensor to every destination rank, point to
        point: exactly the report's `gather-broadcast` baseline
        (lib/Plan/CostModel.cpp, docs/CostModel.md); its root NIC is the
        bottleneck.
  ring  NCCL's broadcast (ncclBroadcast runs only the ring algorithm),
        pipelined, over CHANNELS parallel rings as NCCL splits a collective
        over its channels: each ring is a chain root -> d1 -> d2 -> ...
        through the destination ranks grouped by NVLink domain, the root's
        domain first (so it crosses the network once per other domain that
        holds destinations), and ring c rotates
        the order inside every domain by c * ceil(size / CHANNELS) so that
        the rings enter and leave a domain through different GPUs' NICs (as
        NCCL's rings use every NIC of a node). Every hop of ring c carries
        1/CHANNELS of the tensor, all hops in flight together (chunks fine
        enough that the pipeline fill is negligible). This is the fairer
        baseline.

Two orders of the tensors:

  all at once (p2p, ring): every tensor's gather is step 0 and every
        broadcast step 1, and the flows of one step between the same two
        ranks are summed into one message (the per-(step, src, dst)
        aggregation of the plans themselves). The baseline then gets perfect
        overlap of all tensors and unlimited staging memory (every rank
        receives every full tensor at once): a bound on the baseline at
        its best, not a program anyone runs.
  in order (ring-seq): tensor i's gather is step 2i and its broadcast step
        2i+1, as a loop of per-tensor collectives on every rank's stream
        runs them. A rank takes part only in the steps of the tensors it
        sends or receives, so collectives over disjoint ranks still overlap
        (different communicators progress independently).

A root that is also a destination keeps its own shard (a local copy, not a
flow).

Shard geometry: reshard.layout.shard_segments (docs/Layout.md: nested torch.chunk
per dim over its axes, major to minor, each block chunked on its own).
"""
import itertools
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from reshard.layout import DTYPE_BYTES, shard_segments  # noqa: E402

CHANNELS = 8  # rings per broadcast; DGX H100 nodes have 8 NICs


def _shards(tensor, side, meshes):
    """(rank, signature, bytes) of every device of the side's mesh."""
    spec = tensor[side]
    mesh = meshes[spec["mesh"]]
    blocks = {int(k): v for k, v in spec.get("blocks", {}).items()}
    order = {int(k): v for k, v in spec.get("order", {}).items()}
    elem = DTYPE_BYTES[tensor["dtype"]]
    out = []
    coords = itertools.product(*(range(s) for s in mesh["shape"]))
    for rank, c in zip(mesh["ranks"], coords):
        sig = shard_segments(tensor["shape"], mesh["shape"], mesh["axes"],
                             spec["dims"], blocks, c, order)
        numel = math.prod(sum(length for _, length in segs) for segs in sig)
        out.append((rank, sig, numel * elem))
    return out


def _ring_hops(root, others, domain_size):
    """(src, dst, share) hops of the CHANNELS rings of one broadcast."""
    domains = {}
    for r in others:
        domains.setdefault(r // domain_size, []).append(r)
    hops = {}
    # The root's own domain first (NVLink only), then the others in order, so
    # that the chain crosses into every other domain exactly once.
    order = sorted(domains, key=lambda d: (d != root // domain_size, d))
    for c in range(CHANNELS):
        chain = [root]
        for d in order:
            ranks = domains[d]
            k = (c * -(-len(ranks) // CHANNELS)) % len(ranks)
            chain += ranks[k:] + ranks[:k]
        for a, b in zip(chain, chain[1:]):
            hops[(a, b)] = hops.get((a, b), 0) + 1
    return [(a, b, n / CHANNELS) for (a, b), n in hops.items()]


def flows(layout_path, model):
    """{(phase, src, dst): bytes}, src == dst for local copies."""
    with open(layout_path) as f:
        layout = json.load(f)
    meshes = layout["meshes"]
    topo = layout.get("topology") or {}
    domain_size = topo.get("nvl_domain_size", 1)
    agg = {}
    broadcasts = {}  # (root, destination ranks but the root) -> bytes

    def add(phase, src, dst, nbytes):
        if nbytes:
            agg[(phase, src, dst)] = agg.get((phase, src, dst), 0) + nbytes

    seq = model == "ring-seq"
    for i, t in enumerate(layout["tensors"]):
        g, b = (2 * i, 2 * i + 1) if seq else (0, 1)
        full = DTYPE_BYTES[t["dtype"]]
        for n in t["shape"]:
            full *= n
        if not full:
            continue
        src = sorted(_shards(t, "src", meshes))
        root = src[0][0]
        seen = set()
        for rank, sig, nbytes in src:
            if sig in seen:
                continue
            seen.add(sig)
            if rank != root:
                add(g, rank, root, nbytes)
        dst = sorted(_shards(t, "dst", meshes))
        for rank, _, nbytes in dst:
            if rank == root:
                add(b, root, root, nbytes)
        others = tuple(r for r, _, _ in dst if r != root)
        if seq:
            for x, y, share in _ring_hops(root, others, domain_size) if others else []:
                add(b, x, y, round(full * share))
            continue
        broadcasts[(root, others)] = broadcasts.get((root, others), 0) + full
    # Tensors with the same root and destinations share every hop.
    for (root, others), full in broadcasts.items():
        if model == "p2p":
            for r in others:
                add(1, root, r, full)
        elif model == "ring":
            if others:
                for a, b, share in _ring_hops(root, others, domain_size):
                    add(1, a, b, round(full * share))
        else:
            raise ValueError(model)
    return agg


def write_flows(layout_path, model, out_path):
    agg = flows(layout_path, model)
    with open(out_path, "w") as f:
        f.write("# gather-broadcast (%s) flows of %s: phase src dst bytes\n"
                % (model, layout_path))
        for (phase, s, d), b in sorted(agg.items()):
            f.write("%d %d %d %d\n" % (phase, s, d, b))
    return agg
