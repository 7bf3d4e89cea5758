"""DTensor-style placements, shardings and whole-model layouts.

The semantics are docs/Layout.md's: a dim sharded over axes (a1, ..., am)
is split as nested torch.chunk, a1 major; blocks are chunked one by one and
concatenated per device; axes that shard no dim replicate; a storage order
lists the logical indices of a dim in the order they are stored, and axes
and blocks split that stored dim. A Layout writes the JSON interchange
format (README.md) and the reshard dialect's .mlir.
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass, field
from typing import (IO, Any, Dict, Iterable, List, Mapping, Optional,
                    Sequence, Tuple, Union)

from .dtypes import DTYPE_BYTES, DTYPES, DTypeLike, dtype_name
from .errors import ReshardError
from .layout_text import layout_dict_to_mlir, write_layout_dict
from .mesh import _SEQ, DeviceMesh, MeshLike, _is_int, init_device_mesh
from .topology import get_topology

__all__ = ["DeviceMesh", "init_device_mesh", "MeshLike", "Shard",
           "Replicate", "Placement", "Sharding", "Redistribution", "Layout",
           "DTYPES", "DTYPE_BYTES", "DTypeLike", "dtype_name", "chunk_range",
           "shard_segments", "stored_to_logical", "write_layout_dict",
           "layout_dict_to_mlir"]


@dataclass(frozen=True)
class Shard:
    """Split tensor dim `dim` over a mesh axis (torch.chunk)."""
    dim: int


@dataclass(frozen=True)
class Replicate:
    """Every device along the mesh axis holds the whole (local) tensor."""


Placement = Union[Shard, Replicate]


def chunk_range(start: int, n: int, parts: int,
                index: int) -> Tuple[int, int]:
    """Piece `index` of torch.chunk of [start, start + n) into `parts`, as
    (start, length); trailing pieces may be short or empty."""
    c = -(-n // parts) if n else 0
    off = min(index * c, n)
    return start + off, min(c, n - off)


def _is_permutation(perm: Any, ndim: int) -> bool:
    """Whether perm lists each of the dims 0..ndim-1 once, as integers."""
    return (isinstance(perm, (list, tuple)) and
            all(_is_int(d) for d in perm) and
            sorted(perm) == list(range(ndim)))


def stored_to_logical(start: int, length: int,
                      runs: Optional[Sequence[Sequence[int]]]
                      ) -> List[Tuple[int, int]]:
    """Stored indices [start, start + length) of a dim with storage order
    `runs` ([start, length] of logical indices in stored order; None: the
    logical order) as logical (start, length) ranges, in stored order."""
    if runs is None:
        return [(start, length)] if length else []
    out, offset, end = [], 0, start + length
    for run_start, run_length in runs:
        lo, hi = max(start, offset), min(end, offset + run_length)
        if lo < hi:
            logical = run_start + lo - offset
            if out and out[-1][0] + out[-1][1] == logical:
                out[-1] = (out[-1][0], out[-1][1] + hi - lo)
            else:
                out.append((logical, hi - lo))
        offset += run_length
    return out


def shard_segments(shape, mesh_shape, axis_names, dims, blocks, coords,
                   order=None):
    """Per tensor dim, the global (start, length) ranges the device at mesh
    `coords` holds, in its local order (docs/Layout.md): each block of the
    dim (blocks: {dim: sizes}) split by nested torch.chunk over the dim's
    axes, major to minor; empty ranges left out. With a storage order
    (order: {dim: runs}) blocks and chunks split the stored dim and the
    ranges are of logical indices."""
    order = order or {}
    out = []
    for d, n in enumerate(shape):
        axes = dims[d] if d < len(dims) else []
        segs, begin = [], 0
        for b in blocks.get(d, [n]):
            start, length = begin, b
            for a in axes:
                i = axis_names.index(a)
                start, length = chunk_range(start, length, mesh_shape[i],
                                            coords[i])
            segs += stored_to_logical(start, length, order.get(d))
            begin += b
        out.append(tuple(segs))
    return tuple(out)


def _check_runs(runs: Any, d: int, n: Optional[int],
                what: Optional[str]) -> None:
    """A storage order's rules (docs/Layout.md "Storage orders"); n None
    checks the form only."""
    where = f"{what}: order of dim {d}" if what else f"order of dim {d}"
    # Empty only on a zero-size dim (the runs must cover [0, n) exactly).
    if not isinstance(runs, _SEQ):
        raise ReshardError(f"{where}: {runs!r} must be a list of "
                           f"[start, length] runs")
    for k, r in enumerate(runs):
        if not isinstance(r, _SEQ) or len(r) != 2 or \
                not all(_is_int(x) for x in r):
            raise ReshardError(f"{where}: run {k} {r!r} is not [start, "
                               f"length] (two integers)")
    if n is None:
        return
    live = []
    for k, (start, length) in enumerate(runs):
        if length == 0:
            continue                    # empty runs count for nothing
        if start < 0 or length < 0 or start + length > n:
            raise ReshardError(
                f"{where}: run {k} [{start}, {length}] is outside dim {d} of "
                f"size {n}; a run [start, length] needs 0 <= start and "
                f"start + length <= {n}")
        live.append((start, length, k))
    covered, last = 0, None
    for start, length, k in sorted(live):
        if start < covered:
            raise ReshardError(
                f"{where}: run {k} [{start}, {length}] overlaps run "
                f"{last[2]} [{last[0]}, {last[1]}]; runs must not overlap")
        if start > covered:
            break
        covered, last = start + length, (start, length, k)
    if covered != n or any(s > covered for s, _, _ in live):
        gap_end = min([s for s, _, _ in live if s > covered] + [n])
        raise ReshardError(f"{where}: no run covers indices [{covered}, "
                           f"{gap_end}) of dim {d}; the runs must cover "
                           f"[0, {n}) exactly")


class Sharding:
    """One side of a redistribution: a mesh, per-dim axis lists, blocks and
    storage orders.

    dims[d] lists the mesh axes that split tensor dim d, major to minor.
    blocks maps a dim to block sizes (fused weights, docs/Layout.md).
    order maps a dim to its storage order: [start, length] runs of logical
    indices in stored order; axes and blocks then split the stored dim
    (docs/Layout.md "Storage orders").
    dim_order lists every dim once, outermost first: the order in which the
    local buffer stores its dims (torch's Tensor.dim_order(); None: row-
    major). The buffer is torch.Tensor.permute(dim_order) of the logical
    shard, made contiguous (docs/Layout.md "Dim orders").
    """

    def __init__(self, mesh: DeviceMesh, dims: Sequence[Sequence[str]],
                 blocks: Optional[Mapping[int, Sequence[int]]] = None,
                 order: Optional[Mapping[int, Sequence[Sequence[int]]]] = None,
                 quant: Optional[Mapping[str, Any]] = None,
                 dim_order: Optional[Sequence[int]] = None) -> None:
        self.mesh = mesh
        # A quantized destination: {"block": [b0, ...]} (with "scale_fmt":
        # "ue8m0" for power-of-two scales) or {"mx": 32} (docs/Layout.md
        # "Quantized destinations"); the tools check it.
        self.quant: Optional[Dict[str, Any]] = None
        if quant is not None:
            keys = set(quant) if isinstance(quant, Mapping) else set()
            if not (keys == {"mx"} or keys in ({"block"},
                                               {"block", "scale_fmt"})):
                raise ReshardError(f"quant: give {{'block': [sizes]}} (and "
                                   f"'scale_fmt': 'ue8m0' or 'fp32') or "
                                   f"{{'mx': 32}}, not {quant!r}")
            if quant.get("scale_fmt", "fp32") not in ("fp32", "ue8m0"):
                raise ReshardError(f"quant: scale_fmt is 'ue8m0' or 'fp32', "
                                   f"not {quant['scale_fmt']!r}")
            b = quant.get("block")
            if b is not None and (
                    isinstance(b, (str, bytes)) or not b or
                    not all(_is_int(n) and n >= 1 for n in b)):
                raise ReshardError(f"quant: block sizes are integers >= 1, "
                                   f"one per dim, not {b!r}")
            if "mx" in quant and not (_is_int(quant["mx"]) and
                                      quant["mx"] == 32):
                raise ReshardError(f"quant: MXFP8 blocks are 32 elements, "
                                   f"not {quant['mx']!r}")
            self.quant = {k: (list(v) if k == "block" else v)
                          for k, v in quant.items()}
        if isinstance(dims, (str, bytes)) or not isinstance(dims, Iterable):
            raise ReshardError(f"dims: give one list of mesh axis names per "
                               f"tensor dim, not {dims!r}")
        dims = list(dims)
        if any(isinstance(d, (Shard, Replicate)) for d in dims):
            raise ReshardError(
                "dims: these are DTensor placements (one per mesh dim); "
                "write Sharding.from_placements(mesh, placements, ndim) or "
                "give one list of mesh axis names per tensor dim")
        for d, axes in enumerate(dims):
            if isinstance(axes, (str, bytes)) or not isinstance(axes,
                                                                Iterable):
                raise ReshardError(f"dims[{d}]: give a list of mesh axis "
                                   f"names, not {axes!r}")
        self.dims = [list(d) for d in dims]
        self.blocks = {int(k): list(v) for k, v in blocks.items()} \
            if blocks else {}
        used = [a for axes in self.dims for a in axes]
        if used and (len(set(used)) != len(used)
                     or not set(used) <= set(mesh.axis_names)):
            self._explain(used)
        for d in self.blocks:
            if not 0 <= d < len(self.dims):
                raise ReshardError(f"blocks: dim {d} out of range")
        self.order: Dict[int, List[List[int]]] = {}
        for d, runs in (order or {}).items():
            if isinstance(d, str) and d.isdigit():
                d = int(d)                  # as in the JSON, like blocks
            if not _is_int(d) or not 0 <= d < len(self.dims):
                raise ReshardError(f"order: dim {d!r} out of range (the "
                                   f"sharding has {len(self.dims)} dims)")
            _check_runs(runs, int(d), None, None)
            self.order[int(d)] = [[int(a), int(b)] for a, b in runs]
        # The identity is kept as None: one layout, one spelling.
        self.dim_order: Optional[List[int]] = None
        if dim_order is not None:
            if isinstance(dim_order, (str, bytes)) or not isinstance(
                    dim_order, Iterable):
                raise ReshardError(f"dim_order: give a list of dims, not "
                                   f"{dim_order!r}")
            perm = list(dim_order)
            if not _is_permutation(perm, len(self.dims)):
                raise ReshardError(f"dim_order: {perm!r} is not a "
                                   f"permutation of the sharding's "
                                   f"{len(self.dims)} dim(s); list every dim "
                                   f"0..{len(self.dims) - 1} once, outermost "
                                   f"first")
            if perm != list(range(len(perm))):
                self.dim_order = [int(d) for d in perm]

    def _explain(self, used):
        for d, axes in enumerate(self.dims):
            for a in axes:
                if a not in self.mesh.axis_names:
                    raise ReshardError(f"dims[{d}]: unknown mesh axis {a!r} "
                                       f"(mesh axes: {self.mesh.axis_names})")
                if used.count(a) > 1:
                    raise ReshardError(f"dims[{d}]: mesh axis {a!r} used "
                                       f"twice")

    @classmethod
    def from_placements(cls, mesh: DeviceMesh,
                        placements: Iterable[Placement], ndim: int,
                        blocks: Optional[Mapping[int, Sequence[int]]] = None,
                        order: Optional[Mapping[int, Sequence[Sequence[int]]]]
                        = None) -> Sharding:
        """DTensor placements, one per mesh dim, -> a Sharding.

        Several mesh dims sharding one tensor dim nest in mesh-dim order
        (the first is the major split), as DTensor's default does.
        """
        placements = list(placements)
        if len(placements) != len(mesh.shape):
            raise ReshardError(f"{len(placements)} placements for a "
                               f"{len(mesh.shape)}-D mesh")
        dims = [[] for _ in range(ndim)]
        for i, p in enumerate(placements):
            if isinstance(p, Replicate):
                continue
            if not isinstance(p, Shard):
                raise ReshardError(f"placement {i}: {p!r} is not Shard or "
                                   f"Replicate")
            d = p.dim + ndim if p.dim < 0 else p.dim
            if not 0 <= d < ndim:
                raise ReshardError(f"placement {i}: Shard({p.dim}) of a "
                                   f"{ndim}-D tensor")
            dims[d].append(mesh.axis_names[i])
        return cls(mesh, dims, blocks, order)

    def check_blocks(self, shape: Sequence[int], what: str = "blocks"
                     ) -> None:
        """Blocks must be sizes >= 0 that add up to their dim, and storage
        orders must cover their dim (docs/Layout.md)."""
        for d, parts in self.blocks.items():
            if d >= len(shape) or sum(parts) != shape[d] or any(
                    not isinstance(b, int) or b < 0 for b in parts):
                n = shape[d] if d < len(shape) else None
                raise ReshardError(f"{what}: blocks {parts} of dim {d} must be "
                                   f"sizes >= 0 adding up to the dim ({n})")
        for d, runs in self.order.items():
            if d >= len(shape):
                raise ReshardError(f"{what}: order of dim {d}: the tensor "
                                   f"has {len(shape)} dims")
            _check_runs(runs, d, shape[d], what)

    def segments(self, shape: Sequence[int], rank: int
                 ) -> Optional[Tuple[Tuple[Tuple[int, int], ...], ...]]:
        """Per dim, the logical (start, length) ranges this rank holds in
        its local order (shard_segments), or None if it is not in the
        mesh."""
        self.check_blocks(shape)
        c = self.mesh.coords(rank)
        if c is None:
            return None
        return shard_segments(shape, self.mesh.shape, self.mesh.axis_names,
                              self.dims, self.blocks, c, self.order)

    def local_shape(self, shape: Sequence[int],
                    rank: int) -> Optional[List[int]]:
        """This rank's local shard shape (its extents by logical dim), or
        None if it is not in the mesh."""
        segs = self.segments(shape, rank)
        if segs is None:
            return None
        return [sum(length for _, length in d) for d in segs]

    def stored_shape(self, shape: Sequence[int],
                     rank: int) -> Optional[List[int]]:
        """The shape of this rank's buffer: local_shape in dim_order (what
        Plan.local_shape gives and Plan.run expects), or None."""
        local = self.local_shape(shape, rank)
        if local is None or self.dim_order is None:
            return local
        return [local[d] for d in self.dim_order]

    def to_json(self, mesh_name: Optional[str] = None) -> Dict[str, Any]:
        out = {"mesh": mesh_name or self.mesh.name, "dims": self.dims}
        if self.dim_order is not None:
            out["dim_order"] = list(self.dim_order)
        if self.order:
            out["order"] = {str(k): v for k, v in self.order.items()}
        if self.blocks:
            out["blocks"] = {str(k): v for k, v in self.blocks.items()}
        if self.quant:
            out["quant"] = dict(self.quant)
        return out

    def holds_whole_blocks(self, shape: Sequence[int],
                           blocks: Sequence[int]) -> bool:
        """Whether every rank's shard is made of whole blocks of `blocks`
        (one size per dim): every run it holds starts on a block and ends
        on one or at the dim's end, and fused blocks start on one too."""
        return self.cut_block(shape, blocks) is None

    def cut_block(self, shape: Sequence[int], blocks: Sequence[int]
                  ) -> Optional[Tuple[int, int, str]]:
        """The first place a shard cuts a block of `blocks`: (dim, the
        boundary, whose: "a fused block" or "rank R's shard"), or None."""
        for d, sizes in self.blocks.items():
            at = 0
            for b in sizes:
                if at % blocks[d] and at != shape[d]:
                    return d, at, "a fused block"
                at += b
        for r in self.mesh.ranks:
            for d, runs in enumerate(self.segments(shape, r)):
                for a, n in _merge_runs(runs):
                    for edge in (a, a + n):
                        if edge % blocks[d] and edge != shape[d]:
                            return d, edge, f"rank {r}'s shard"
        return None


def sharding_key(side: "Sharding", *more: Any) -> tuple:
    """What decides a sharding's shards (its mesh by value), plus `more`:
    a key for answers many tensors of one sharding share."""
    m = side.mesh
    return (tuple(m.shape), tuple(m.axis_names), tuple(m.ranks),
            str(side.dims), str(side.blocks), str(side.order)) + more


def cut_block_cached(side: "Sharding", shape: Sequence[int],
                     blocks: Sequence[int], cache: Dict[tuple, Any]
                     ) -> Optional[Tuple[int, int, str]]:
    """side.cut_block(shape, blocks), remembered in `cache`: it visits
    every rank, and a model's tensors share a few shardings and shapes."""
    key = sharding_key(side, tuple(shape), tuple(blocks))
    if key not in cache:
        cache[key] = side.cut_block(shape, blocks)
    return cache[key]


def _merge_runs(runs):
    """Non-empty runs, each run that continues the previous one joined to
    it (the local order holds them as one)."""
    merged = []
    for a, n in runs:
        if not n:
            continue
        if merged and merged[-1][0] + merged[-1][1] == a:
            merged[-1][1] += n
        else:
            merged.append([a, n])
    return merged


@dataclass
class Redistribution:
    """One redistribution: a tensor from its src sharding to its dst.

    (Called Tensor before; reshard.Tensor is a deprecated alias.) dtype is
    stored as the JSON name; torch and numpy dtypes are converted.
    """
    name: str
    shape: List[int]
    dtype: DTypeLike         # stored as the JSON name ("bf16")
    src: Sharding
    dst: Sharding
    extra: Dict[str, Any] = field(default_factory=dict)  # extra JSON keys

    def __post_init__(self) -> None:
        self.dtype = dtype_name(self.dtype, self.name)

    def nbytes(self) -> int:
        return math.prod(self.shape) * DTYPE_BYTES[self.dtype]

    def to_json(self, names: Mapping[int, str]) -> Dict[str, Any]:
        d = {"name": self.name, "shape": self.shape, "dtype": self.dtype}
        d.update(self.extra)
        d["src"] = self.src.to_json(names[id(self.src.mesh)])
        d["dst"] = self.dst.to_json(names[id(self.dst.mesh)])
        return d


def __getattr__(name: str) -> Any:
    # Deprecated names, kept for one release.
    if name == "Tensor":
        warnings.warn("reshard.Tensor is deprecated: it is called "
                      "reshard.Redistribution now", DeprecationWarning,
                      stacklevel=2)
        return Redistribution
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Layout:
    """Every tensor of a model with its two shardings, and a topology.

    meshes: optional order of the meshes in the output (the others follow
    in first use); info: written as the JSON's "scenario" key.
    """

    def __init__(self, tensors: Iterable[Redistribution] = (),
                 topology: Union[str, Mapping[str, Any], None] = None,
                 meshes: Iterable[DeviceMesh] = (),
                 info: Optional[Dict[str, Any]] = None) -> None:
        self.tensors: List[Redistribution] = list(tensors)
        self.topology = None if topology is None else get_topology(topology)
        self.info = info
        self._meshes = list(meshes)
        self._by_name: Dict[str, Redistribution] = {}
        self._cuts: Dict[tuple, Any] = {}       # cut_block_cached's

    def add(self, name: str, shape: Sequence[int], dtype: DTypeLike,
            src: Sharding, dst: Sharding, **extra: Any) -> Redistribution:
        """Adds the redistribution of tensor `name` (global `shape`; dtype
        "bf16" or torch.bfloat16 alike) from sharding src to dst; extra
        keys go into its JSON entry."""
        if not isinstance(name, str) or not name:
            raise ReshardError(f"tensor name {name!r}: give a non-empty "
                               f"string")
        if "\0" in name:
            raise ReshardError(f"tensor name {name!r} contains a NUL "
                               f"character; C callers would see it cut "
                               f"short")
        by_name = self._names()
        if name in by_name:
            raise ReshardError(f"{name}: a tensor of this name is already "
                               f"in the layout; names are unique")
        dtype = dtype_name(dtype, name)
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                   for n in shape):
            raise ReshardError(f"{name}: shape {list(shape)} must hold "
                               f"integers >= 0")
        for side, s in (("src", src), ("dst", dst)):
            if len(s.dims) != len(shape):
                raise ReshardError(f"{name}: {side} sharding has "
                                   f"{len(s.dims)} dims, tensor {len(shape)}")
            s.check_blocks(shape, f"{name}: {side}")
        if src.quant:
            raise ReshardError(f"{name}: quant belongs to the destination")
        if dst.quant:
            self._check_quant(name, list(shape), dtype, dst)
        # `<t>.scale` names the scales of a quantized t.
        owner = by_name.get(name[:-len(".scale")]) \
            if name.endswith(".scale") else None
        if owner is not None and owner.dst.quant:
            raise ReshardError(f"{name}: the scales of the quantized "
                               f"tensor {owner.name!r} have this name; "
                               f"rename one")
        if dst.quant and name + ".scale" in by_name:
            raise ReshardError(f"{name}: its scales would be named "
                               f"{name + '.scale'!r}, which another tensor "
                               f"is; rename one")
        t = Redistribution(name, list(shape), dtype, src, dst, extra)
        self.tensors.append(t)
        by_name[name] = t
        return t

    def _names(self) -> Dict[str, Redistribution]:
        """The tensors by name, kept beside `tensors` (rebuilt when the list
        was changed directly): add() checks names in constant time, so a
        model of tens of thousands of tensors builds in linear time."""
        last = self.tensors[-1] if self.tensors else None
        if len(self._by_name) != len(self.tensors) or (
                last is not None and self._by_name.get(last.name) is not last):
            self._by_name = {t.name: t for t in self.tensors}
        return self._by_name

    def _check_quant(self, name: str, shape: List[int], dtype: str,
                     dst: Sharding) -> None:
        """The rules of docs/Layout.md "Quantized destinations" that need
        no planning (reshard-compile checks them all again)."""
        q = dst.quant
        if dtype not in ("bf16", "fp16", "fp32"):
            raise ReshardError(f"{name}: an FP8 destination quantizes bf16, "
                               f"fp16 or fp32, not {dtype}")
        if not shape:
            raise ReshardError(f"{name}: a 0-D tensor has no blocks")
        if "block" in q and len(q["block"]) != len(shape):
            raise ReshardError(f"{name}: quant has {len(q['block'])} block "
                               f"sizes for {len(shape)} dims")
        if any(dst.order.values()):
            raise ReshardError(f"{name}: a quantized destination has no "
                               f"storage order")
        if dst.dim_order is not None:
            raise ReshardError(f"{name}: a quantized destination stores its "
                               f"dims row-major (no dim_order)")
        b = q.get("block") or [1] * (len(shape) - 1) + [q["mx"]]
        cut = cut_block_cached(dst, shape, b,
                               self.__dict__.setdefault("_cuts", {}))
        if cut:
            d, at, whose = cut
            raise ReshardError(
                f"{name}: dim {d}: shard boundary {at} ({whose}) is not a "
                f"multiple of the block size {b[d]} (blocks {b}): every "
                f"shard boundary along a blocked dim must be a multiple of "
                f"its block size, except at the dim's end")

    def mesh_names(self) -> Tuple[Dict[int, str], Dict[str, DeviceMesh]]:
        """id(mesh) -> unique name; unnamed meshes become mesh0, mesh1..."""
        names, used, order = {}, {}, list(self._meshes)
        for t in self.tensors:
            order += [t.src.mesh, t.dst.mesh]
        # Explicit names first, so that an unnamed mesh never takes one.
        taken = {m.name for m in order if m.name is not None}
        k = 0
        for m in order:
            if id(m) in names:
                continue
            name = m.name
            if name is None:
                while f"mesh{k}" in used or f"mesh{k}" in taken:
                    k += 1
                name = f"mesh{k}"
            if name in used and not used[name].same_as(m):
                raise ReshardError(f"two different meshes are named {name!r}")
            names[id(m)] = name
            used.setdefault(name, m)
        return names, used

    def to_dict(self) -> Dict[str, Any]:
        """The layout in the JSON interchange format, as a dict."""
        names, meshes = self.mesh_names()
        out = {}
        if self.info is not None:
            out["scenario"] = self.info
        out["meshes"] = {n: m.to_json() for n, m in meshes.items()}
        if self.topology is not None:
            out["topology"] = dict(self.topology)
        out["tensors"] = [t.to_json(names) for t in self.tensors]
        return out

    def write_json(self, f: Union[str, bytes, os.PathLike, IO[str]]) -> None:
        """The JSON, one mesh per line and one tensor per line (f: path or
        file); diagnostics of the importer then point at a readable line."""
        if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
            with open(f, "w") as out:
                return self.write_json(out)
        write_layout_dict(self.to_dict(), f)

    def to_mlir(self) -> str:
        """The layout as reshard dialect text."""
        return layout_dict_to_mlir(self.to_dict())

    def write_mlir(self, path: Union[str, os.PathLike]) -> None:
        with open(path, "w") as f:
            f.write(self.to_mlir())
