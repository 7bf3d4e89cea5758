#!/usr/bin/env python3
"""Derives the table that bench/measured/gather_bcast.cpp runs from a layout
JSON (README.md, "The layout interchange format"): every tensor's source
holders (one per distinct shard) and destination ranks with their shards as
per-dim segment lists, and the buckets with their gather roots.

  gather_table.py LAYOUT.json --out TABLE [--bucket-bytes N]

Geometry: reshard.layout.shard_segments, as docs/Layout.md defines it: a dim
sharded over axes (a1..am) is split by nested torch.chunk (chunks of ceil(n/|a|), the last ones shorter or
empty), each block of a blocked dim on its own, a rank's local extent the
concatenation of its piece of every block (of the stored dim, with a storage
order; the segments are of logical indices). The program's output is checked
by `reshard-run --verify`, independently of this code.

Buckets: consecutive tensors with the same destination ranks are packed up
to --bucket-bytes of full tensors (0: one tensor per bucket). A bucket is
broadcast to its tensors' destination ranks; with --broadcast-all, to every
rank of any destination mesh (the classic path of the refit literature:
every inference rank receives every whole tensor and keeps its shard). Each bucket's
root rotates over its destination ranks; a shard held by several ranks
(replicas) is sent by the root when it holds it, else by a replica chosen
by the same rotation.
"""
import argparse
import itertools
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "python"))
from reshard.layout import DTYPE_BYTES, shard_segments  # noqa: E402


def shards(mesh, side, shape):
    """{rank: per-dim segment lists} for every rank of the side's mesh."""
    blocks = {int(k): v for k, v in side.get("blocks", {}).items()}
    order = {int(k): v for k, v in side.get("order", {}).items()}
    coords = itertools.product(*(range(s) for s in mesh["shape"]))
    return {rank: shard_segments(shape, mesh["shape"], mesh["axes"],
                                 side["dims"], blocks, c, order)
            for rank, c in zip(mesh["ranks"], coords)}


def build(layout, bucket_bytes, broadcast_all=False):
    meshes = layout["meshes"]
    tensors, ranks = [], 0
    for t in layout["tensors"]:
        shape = t["shape"]
        src = shards(meshes[t["src"]["mesh"]], t["src"], shape)
        dst = shards(meshes[t["dst"]["mesh"]], t["dst"], shape)
        nbytes = DTYPE_BYTES[t["dtype"]]
        for n in shape:
            nbytes *= n
        ranks = max([ranks] + [r + 1 for r in list(src) + list(dst)])
        tensors.append(dict(name=t["name"], elem=DTYPE_BYTES[t["dtype"]],
                            shape=shape, src=src, dst=dst, bytes=nbytes))
    everyone = sorted({r for t in tensors for r in t["dst"]})
    buckets = []
    for i, t in enumerate(tensors):
        key = tuple(sorted(t["dst"]))
        b = buckets[-1] if buckets else None
        if (b is None or b["key"] != key or bucket_bytes == 0 or
                b["bytes"] + t["bytes"] > bucket_bytes):
            b = dict(key=key, tensors=[], bytes=0)
            buckets.append(b)
        b["tensors"].append(i)
        b["bytes"] += t["bytes"]
    for k, b in enumerate(buckets):
        b["root"] = b["key"][k % len(b["key"])]
        b["extra"] = [r for r in everyone if r not in b["key"]] \
            if broadcast_all else []
        for i in b["tensors"]:
            t = tensors[i]
            groups = {}
            for r in sorted(t["src"]):
                segs = t["src"][r]
                if all(segs):  # a non-empty shard
                    groups.setdefault(repr(segs), []).append(r)
            t["holders"] = [b["root"] if b["root"] in g else g[k % len(g)]
                            for g in groups.values()]
    return ranks, tensors, buckets


def write(f, ranks, tensors, buckets):
    def shard(rank, segs):
        return " ".join([str(rank)] + [
            " ".join([str(len(d))] + ["%d %d" % sl for sl in d]) for d in segs])
    f.write("reshard-gather-bcast-table 1\nranks %d\ntensors %d\n" %
            (ranks, len(tensors)))
    for t in tensors:
        f.write("t %s %d %d %s\n" % (t["name"], t["elem"], len(t["shape"]),
                                     " ".join(map(str, t["shape"]))))
        f.write("src %d\n" % len(t["holders"]))
        for r in t["holders"]:
            f.write(shard(r, t["src"][r]) + "\n")
        f.write("dst %d\n" % len(t["dst"]))
        for r in sorted(t["dst"]):
            f.write(shard(r, t["dst"][r]) + "\n")
    f.write("buckets %d\n" % len(buckets))
    for b in buckets:
        f.write("b %d %d %s extra %d %s\n" % (
            b["root"], len(b["tensors"]), " ".join(map(str, b["tensors"])),
            len(b["extra"]), " ".join(map(str, b["extra"]))))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("layout")
    p.add_argument("--out", required=True)
    p.add_argument("--bucket-bytes", type=int, default=0)
    p.add_argument("--broadcast-all", action="store_true")
    a = p.parse_args(argv)
    with open(a.layout) as f:
        layout = json.load(f)
    ranks, tensors, buckets = build(layout, a.bucket_bytes, a.broadcast_all)
    with open(a.out, "w") as f:
        write(f, ranks, tensors, buckets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
