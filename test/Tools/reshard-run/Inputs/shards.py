#!/usr/bin/env python3
"""Shard files for reshard-run, computed independently of the C++ code.

Reads a layout in the JSON interchange format and applies the layout semantics
of docs/Layout.md itself (storage orders, nested torch.chunk with ceil(n/k) chunks, blocks chunked
separately and concatenated, replication over unused mesh axes, dense local
buffers row-major over their dims in the side's dim_order, mesh coordinates from the row-major `ranks` list). Element
values are random (a fixed seed per tensor, all distinct where the element
type allows), not the global index, so a plan that moves the right amount of
data to the wrong place cannot pass.

  shards.py gen    LAYOUT.json DIR [--seed N]
      write every source rank's shard to DIR/rank<R>.<tensor>.bin
  shards.py verify LAYOUT.json DIR [--seed N] [--allow-extra]
      check every destination shard in DIR byte for byte (and its exact size);
      unless --allow-extra, DIR must hold nothing else
"""
import argparse
import itertools
import json
import os
import random
import sys

DTYPE_BYTES = {
    "bf16": 2, "fp16": 2, "fp32": 4, "fp64": 8, "int8": 1, "uint8": 1,
    "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "int64": 8,
    "uint64": 8, "fp8e4m3": 1, "fp8e5m2": 1,
}


def chunk(start, length, parts, index):
    """torch.chunk: `parts` chunks of ceil(length/parts), the last ones
    shorter or empty; returns chunk `index` as (start, length)."""
    size = -(-length // parts)
    lo = min(index * size, length)
    hi = min((index + 1) * size, length)
    return start + lo, hi - lo


def unravel(linear, shape):
    coords = []
    for extent in reversed(shape):
        coords.append(linear % extent)
        linear //= extent
    return list(reversed(coords))


def dim_indices(size, axes, blocks, mesh, coords, order=None):
    """Global (logical) indices, in local order, that a device holds along
    one dim. An order lists [start, length] runs of logical indices in
    stored order; axes and blocks split the stored dim."""
    stored = list(range(size))
    if order is not None:
        stored = [i for start, length in order
                  for i in range(start, start + length)]
        assert sorted(stored) == list(range(size)), "order must cover the dim"
    out = []
    block_start = 0
    for block in blocks if blocks is not None else [size]:
        start, length = block_start, block
        for axis in axes:
            a = mesh["axes"].index(axis)
            start, length = chunk(start, length, mesh["shape"][a], coords[a])
        out.extend(stored[start:start + length])
        block_start += block
    assert block_start == size, "blocks must sum to the dim"
    return out


def local_shards(layout, tensor, side):
    """{rank: (buffer shape, [global linear index of each element in buffer
    order])}; the buffer shape is the local shape in the side's dim_order."""
    spec = tensor[side]
    mesh = layout["meshes"][spec["mesh"]]
    shape = tensor["shape"]
    strides = [1] * len(shape)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    blocks = spec.get("blocks", {})
    order = spec.get("order", {})
    shards = {}
    for i, rank in enumerate(mesh["ranks"]):
        coords = unravel(i, mesh["shape"])
        per_dim = [dim_indices(shape[d], spec["dims"][d], blocks.get(str(d)),
                               mesh, coords, order.get(str(d)))
                   for d in range(len(shape))]
        local_shape = [len(ix) for ix in per_dim]
        # The buffer holds its dims in dim_order, outermost first: walk the
        # lists in that order, each element named by its logical index.
        perm = spec.get("dim_order", list(range(len(shape))))
        linear = []
        for stored in itertools.product(*(per_dim[d] for d in perm)):
            idx = [0] * len(shape)
            for d, i in zip(perm, stored):
                idx[d] = i
            linear.append(sum(i * s for i, s in zip(idx, strides)))
        shards[rank] = ([local_shape[d] for d in perm], linear)
    return shards


def global_values(tensor, seed):
    """Random little-endian element bytes of the whole tensor."""
    nbytes = DTYPE_BYTES[tensor["dtype"]]
    count = 1
    for extent in tensor["shape"]:
        count *= extent
    rng = random.Random("%d:%s" % (seed, tensor["name"]))
    bits = 8 * nbytes
    values, seen = [], set()
    while len(values) < count:
        v = rng.getrandbits(bits)
        # Distinct while the type has room, so no element can stand in for
        # another; beyond that (only 1-byte tensors of > 256 elements) repeat.
        if v in seen and len(seen) < (1 << bits):
            continue
        seen.add(v)
        values.append(v)
    return [v.to_bytes(nbytes, "little") for v in values]


def shard_bytes(values, linear):
    return b"".join(values[i] for i in linear)


def shard_path(directory, rank, name):
    return os.path.join(directory, "rank%d.%s.bin" % (rank, name))


def gen(layout, directory, seed):
    files = empty = 0
    for tensor in layout["tensors"]:
        values = global_values(tensor, seed)
        for rank, (_, linear) in local_shards(layout, tensor, "src").items():
            with open(shard_path(directory, rank, tensor["name"]), "wb") as f:
                f.write(shard_bytes(values, linear))
            files += 1
            empty += not linear
    print("wrote %d source shards (%d empty)" % (files, empty))
    return 0


def verify(layout, directory, seed, allow_extra):
    expected_names = set()
    files = empty = total = errors = 0
    for tensor in layout["tensors"]:
        name = tensor["name"]
        nbytes = DTYPE_BYTES[tensor["dtype"]]
        values = global_values(tensor, seed)
        for rank, (shape, linear) in local_shards(layout, tensor, "dst").items():
            path = shard_path(directory, rank, name)
            expected_names.add(os.path.basename(path))
            want = shard_bytes(values, linear)
            assert len(want) == len(linear) * nbytes
            if not os.path.isfile(path):
                print("ERROR: %s: missing (rank %d of '%s')" % (path, rank, name))
                errors += 1
                continue
            size = os.path.getsize(path)
            with open(path, "rb") as f:
                got = f.read()
            files += 1
            empty += not linear
            total += size
            if size != len(want):
                print("ERROR: %s: %d bytes, rank %d of '%s' has local shape %s "
                      "so %d" % (path, size, rank, name, shape, len(want)))
                errors += 1
                continue
            if got == want:
                continue
            errors += 1
            for e in range(len(linear)):
                g, w = got[e * nbytes:(e + 1) * nbytes], want[e * nbytes:(e + 1) * nbytes]
                if g != w:
                    print("ERROR: %s: rank %d of '%s' local element %d (global "
                          "linear index %d): expected %s, got %s"
                          % (path, rank, name, e, linear[e], w.hex(), g.hex()))
                    break
    if not allow_extra:
        for extra in sorted(set(os.listdir(directory)) - expected_names):
            print("ERROR: %s: not a destination shard of any tensor"
                  % os.path.join(directory, extra))
            errors += 1
    if errors:
        print("FAILED: %d destination shards wrong" % errors)
        return 1
    print("verified %d destination shards of %d tensors (%d empty), %d bytes: "
          "all correct" % (files, len(layout["tensors"]), empty, total))
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["gen", "verify"])
    parser.add_argument("layout")
    parser.add_argument("dir")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--allow-extra", action="store_true")
    args = parser.parse_args()
    with open(args.layout) as f:
        layout = json.load(f)
    if args.mode == "gen":
        return gen(layout, args.dir, args.seed)
    return verify(layout, args.dir, args.seed, args.allow_extra)


if __name__ == "__main__":
    sys.exit(main())
