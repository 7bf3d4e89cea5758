"""Meshes, DTensor-style placements and whole-model layouts.

The semantics are docs/Layout.md's: a dim sharded over axes (a1, ..., am)
is split as nested torch.chunk, a1 major; blocks are chunked one by one and
concatenated per device; axes that shard no dim replicate; a storage order
lists the logical indices of a dim in the order they are stored, and axes
and blocks split that stored dim. A Layout writes the JSON interchange
format (README.md) and the reshard dialect's .mlir.
"""
from __future__ import annotations

import inspect
import json
import math
import numbers
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import (IO, Any, Dict, Iterable, List, Mapping, Optional,
                    Sequence, Tuple, Union)

from .dtypes import DTYPE_BYTES, DTYPES, DTypeLike, dtype_name
from .errors import ReshardError
from .topology import get_topology

__all__ = ["DeviceMesh", "init_device_mesh", "MeshLike", "Shard",
           "Replicate", "Placement", "Sharding", "Redistribution", "Layout",
           "DTYPES", "DTYPE_BYTES", "DTypeLike", "dtype_name", "chunk_range",
           "shard_segments", "stored_to_logical", "write_layout_dict",
           "layout_dict_to_mlir"]

MeshLike = Any
"""Global ranks, row-major: a nested list (its depth is the number of mesh
dims; a bare int is a 0-D mesh of one rank), or anything with .tolist() (a
torch tensor, a numpy array)."""

_SEQ = (list, tuple, range)
_UNSET = object()


def _is_int(x: Any) -> bool:
    """Python and numpy integers; not bools."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_bool(x: Any) -> bool:
    """Python and numpy bools."""
    return isinstance(x, bool) or type(x).__module__ == "numpy" and \
        type(x).__name__ in ("bool", "bool_")


def _where(path: Sequence[int]) -> str:
    return "mesh" + "".join(f"[{i}]" for i in path)


def _parse_mesh(mesh: MeshLike, what: str) -> Tuple[List[int], List[int]]:
    """(shape, flat row-major ranks) of a nested list of ranks, checked:
    rectangular, integers (bools are not), >= 0, distinct."""
    if isinstance(mesh, (str, bytes)):
        raise ReshardError(
            f"{what}: mesh {mesh!r} is not a list of ranks (reshard's "
            f"DeviceMesh takes no device type: DeviceMesh([[0, 1], [2, 3]], "
            f"mesh_dim_names=('dp', 'tp')))")
    if hasattr(mesh, "mesh") and not hasattr(mesh, "tolist") and \
            not isinstance(mesh, _SEQ):
        raise ReshardError(
            f"{what}: {type(mesh).__name__} is not a list of ranks; convert "
            f"a torch DeviceMesh with reshard.dtensor.mesh_from_torch(), or "
            f"pass its .mesh")

    def plain(x):
        return x.tolist() if not isinstance(x, _SEQ) and \
            hasattr(x, "tolist") else x

    shape: List[int] = []
    x = plain(mesh)
    while isinstance(x, _SEQ):
        shape.append(len(x))
        if not len(x):
            break
        x = plain(x[0])
    flat: List[int] = []
    seen: Dict[int, Tuple[int, ...]] = {}

    def walk(x, path):
        x = plain(x)
        d = len(path)
        if d < len(shape):
            if not isinstance(x, _SEQ):
                raise ReshardError(
                    f"{what}: {_where(path)} is {x!r} where a list of "
                    f"{shape[d]} is expected (the mesh is not rectangular)")
            if len(x) != shape[d]:
                raise ReshardError(
                    f"{what}: {_where(path)} has {len(x)} entries where "
                    f"{_where([0] * d)} has {shape[d]} (the mesh is not "
                    f"rectangular)")
            for i, e in enumerate(x):
                walk(e, path + (i,))
            return
        if isinstance(x, _SEQ):
            raise ReshardError(f"{what}: {_where(path)} is a list where a "
                               f"rank is expected (the mesh is not "
                               f"rectangular)")
        if not _is_int(x):
            raise ReshardError(f"{what}: {_where(path)} = {x!r} is not an "
                               f"integer rank")
        r = int(x)
        if r < 0:
            raise ReshardError(f"{what}: {_where(path)} = {r}: ranks must "
                               f"be >= 0")
        if r in seen:
            raise ReshardError(f"{what}: rank {r} appears twice "
                               f"({_where(seen[r])} and {_where(path)}); "
                               f"ranks must be distinct")
        seen[r] = path
        flat.append(r)

    walk(mesh, ())
    if 0 in shape:
        raise ReshardError(f"{what}: shape {shape}: every mesh dim needs at "
                           f"least one rank")
    return shape, flat


def _parse_names(names: Any, shape: List[int], ranks: List[int],
                 what: str) -> Tuple[str, ...]:
    """One unique non-empty string per mesh dim (None: dim0, dim1, ...)."""
    ndim = len(shape)
    if names is None:
        return tuple(f"dim{i}" for i in range(ndim))
    if isinstance(names, str):
        raise ReshardError(f"{what}: mesh_dim_names {names!r} is a string; "
                           f"give one name per mesh dim, e.g. ({names!r},)")
    try:
        names = tuple(names)
    except TypeError:
        raise ReshardError(f"{what}: mesh_dim_names must be a sequence of "
                           f"strings, not {type(names).__name__}") from None
    for i, n in enumerate(names):
        if not isinstance(n, str) or not n:
            raise ReshardError(f"{what}: mesh_dim_names[{i}] = {n!r} is not "
                               f"a non-empty string")
    if len(names) != ndim:
        raise ReshardError(f"{what}: a {ndim}-D mesh (shape {shape}) but "
                           f"{len(names)} mesh_dim_names {list(names)}")
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ReshardError(f"{what}: duplicate mesh_dim_names "
                           f"{', '.join(map(repr, dup))} in {list(names)}")
    return names


def _nest(flat: Sequence[int], shape: Sequence[int]) -> Any:
    """Row-major flat list -> nested lists of `shape` (a scalar for [])."""
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nest(flat[i * step:(i + 1) * step], shape[1:])
            for i in range(shape[0])]


def _parse_shape(shape: Any, what: str, label: str) -> List[int]:
    if isinstance(shape, (str, bytes)):
        raise ReshardError(
            f"{what}: {label} {shape!r} is not a tuple of sizes (reshard's "
            f"init_device_mesh takes no device type: init_device_mesh((2, "
            f"4), mesh_dim_names=('dp', 'tp')))")
    if hasattr(shape, "tolist") and not isinstance(shape, _SEQ):
        shape = shape.tolist()
    if not isinstance(shape, _SEQ):
        raise ReshardError(f"{what}: {label} {shape!r} must be a tuple of "
                           f"sizes, e.g. (2, 4)")
    shape = list(shape)
    if not all(_is_int(s) and s > 0 for s in shape):
        raise ReshardError(f"{what}: {label} {shape}: sizes must be "
                           f"positive integers")
    return [int(s) for s in shape]


class DeviceMesh:
    """An N-D array of global ranks, row-major, one name per mesh dim.

    torch.distributed.device_mesh.DeviceMesh(device_type, mesh,
    mesh_dim_names=...) without the device type and the process groups:
    `mesh` is the nested list of global ranks (a torch tensor, a numpy array
    or anything with .tolist() will do; a flat list is a 1-D mesh, a bare
    int a 0-D mesh of one rank), `mesh_dim_names` one unique name per mesh
    dim (default dim0, dim1, ...). `name` is the mesh's symbol in the JSON
    and .mlir (default: mesh0, mesh1, ... in order of use).

        DeviceMesh([[0, 1, 2, 3], [4, 5, 6, 7]], mesh_dim_names=("dp", "tp"))

    The old spelling DeviceMesh(shape, axis_names, ranks=None, name=None)
    still works when it is unambiguous, i.e. with ranks (a third
    argument or ranks=), the keywords shape= / axis_names=, or a flat
    shape of two or more sizes with as many names (DeviceMesh([2, 4],
    ["dp", "tp"]): as ranks it would be a 1-D mesh with two names), and
    warns (DeprecationWarning); it goes in the next release. A 1-D
    DeviceMesh([4], ["tp"]) is read the new way, as the mesh of rank 4:
    write init_device_mesh((4,), mesh_dim_names=("tp",)).
    """

    def __init__(self, mesh: MeshLike = _UNSET,
                 mesh_dim_names: Optional[Sequence[str]] = None,
                 *_old_args: Any, name: Optional[str] = None,
                 **_old_kwargs: Any) -> None:
        if _old_args or _old_kwargs or mesh is _UNSET or _old_shape_and_names(
                mesh, mesh_dim_names):
            mesh, mesh_dim_names, name = _old_signature(
                mesh, mesh_dim_names, _old_args, name, _old_kwargs)
            warnings.warn(
                "DeviceMesh(shape, axis_names, ranks, name=) is deprecated: "
                "write DeviceMesh(nested list of ranks, mesh_dim_names=..., "
                "name=...) or init_device_mesh(shape, mesh_dim_names=..., "
                "first_rank=...)", DeprecationWarning, stacklevel=2)
        if name is not None and (not isinstance(name, str) or not name):
            raise ReshardError(f"mesh name {name!r} must be a non-empty "
                               f"string")
        self.name = name
        what = f"mesh {name!r}" if name else "DeviceMesh"
        shape, ranks = _parse_mesh(mesh, what)
        self._shape = tuple(shape)
        self._names = _parse_names(mesh_dim_names, shape, ranks, what)
        self._ranks = tuple(ranks)
        self._index = {r: i for i, r in enumerate(ranks)}

    # torch's accessors ----------------------------------------------------
    @property
    def shape(self) -> List[int]:
        """Size of each mesh dim (a list; torch's is a tuple)."""
        return list(self._shape)

    @property
    def mesh_dim_names(self) -> Tuple[str, ...]:
        return self._names

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def mesh(self) -> Any:
        """The global ranks as nested lists (torch: a tensor)."""
        return _nest(self._ranks, self._shape)

    def size(self, mesh_dim: Union[int, str, None] = None) -> int:
        """Number of ranks (mesh_dim None), or the size of a mesh dim given
        by index (negative counts from the end) or by name."""
        if mesh_dim is None:
            return len(self._ranks)
        if isinstance(mesh_dim, str):
            if mesh_dim not in self._names:
                raise ReshardError(f"no mesh dim {mesh_dim!r} (mesh dims: "
                                   f"{list(self._names)})")
            return self._shape[self._names.index(mesh_dim)]
        if not _is_int(mesh_dim) or not -self.ndim <= mesh_dim < self.ndim:
            raise ReshardError(f"mesh dim {mesh_dim!r} out of range for a "
                               f"{self.ndim}-D mesh")
        return self._shape[mesh_dim]

    # reshard's ------------------------------------------------------------
    @property
    def axis_names(self) -> List[str]:
        """mesh_dim_names as a list (the names Sharding.dims uses)."""
        return list(self._names)

    @property
    def ranks(self) -> List[int]:
        """The global ranks, flat, row-major."""
        return list(self._ranks)

    def coords(self, rank: int) -> Optional[Tuple[int, ...]]:
        """Mesh coordinates of a global rank, or None if it is not here."""
        i = self._index.get(rank)
        if i is None:
            return None
        out = []
        for s in reversed(self._shape):
            i, c = divmod(i, s)
            out.append(c)
        return tuple(reversed(out))

    def to_json(self) -> Dict[str, Any]:
        return {"shape": self.shape, "axes": self.axis_names,
                "ranks": self.ranks}

    def same_as(self, other: DeviceMesh) -> bool:
        return self.to_json() == other.to_json()

    def __repr__(self) -> str:
        name = f", name={self.name!r}" if self.name is not None else ""
        return (f"DeviceMesh({self.mesh!r}, mesh_dim_names={self._names!r}"
                f"{name})")


# What help() and inspect show: the new spelling only.
DeviceMesh.__signature__ = inspect.Signature([
    inspect.Parameter("mesh", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                      annotation="MeshLike"),
    inspect.Parameter("mesh_dim_names",
                      inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None,
                      annotation="Optional[Sequence[str]]"),
    inspect.Parameter("name", inspect.Parameter.KEYWORD_ONLY, default=None,
                      annotation="Optional[str]")])


def _old_shape_and_names(mesh, names) -> bool:
    """DeviceMesh([2, 4], ["dp", "tp"]): a flat list with one name per
    entry, two or more, can only be the old (shape, axis_names) spelling
    (as ranks it would be a 1-D mesh with several names)."""
    return (isinstance(mesh, (list, tuple)) and len(mesh) >= 2 and
            all(_is_int(n) and n >= 1 for n in mesh) and
            isinstance(names, (list, tuple)) and len(names) == len(mesh))


def _old_signature(shape, axis_names, args, name, kwargs):
    """The deprecated DeviceMesh(shape, axis_names, ranks=None, name=None)
    -> (nested ranks, names, name)."""
    kwargs = dict(kwargs)
    unknown = sorted(set(kwargs) - {"shape", "axis_names", "ranks"})
    if unknown:
        raise TypeError(f"DeviceMesh() got an unexpected keyword argument "
                        f"{unknown[0]!r}")
    if len(args) > 2:
        raise TypeError(f"DeviceMesh() takes at most 4 positional arguments "
                        f"({len(args) + 2} given)")
    for key, pos in (("shape", shape is not _UNSET),
                     ("axis_names", axis_names is not None),
                     ("ranks", len(args) >= 1)):
        if key in kwargs and pos:
            raise TypeError(f"DeviceMesh() got multiple values for "
                            f"{key!r}")
    if len(args) == 2:
        if name is not None:
            raise TypeError("DeviceMesh() got multiple values for 'name'")
        name = args[1]
    shape = kwargs.get("shape", shape)
    axis_names = kwargs.get("axis_names", axis_names)
    ranks = kwargs.get("ranks", args[0] if args else None)
    if shape is _UNSET or axis_names is None:
        raise TypeError("DeviceMesh() missing its mesh (the nested list of "
                        "global ranks)")
    what = f"mesh {name!r}" if name else "DeviceMesh"
    shape = _parse_shape(shape, what, "shape")
    size = math.prod(shape)
    ranks = list(range(size) if ranks is None else ranks)
    if len(ranks) != size:
        raise ReshardError(f"{what}: shape {shape} has {size} devices but "
                           f"{len(ranks)} ranks")
    return _nest(ranks, shape), axis_names, name


def init_device_mesh(mesh_shape: Sequence[int],
                     mesh_dim_names: Optional[Sequence[str]] = None,
                     first_rank: int = 0, *,
                     name: Optional[str] = None) -> DeviceMesh:
    """A mesh of `mesh_shape` over global ranks first_rank ..
    first_rank + prod(mesh_shape) - 1, row-major (the last dim fastest), as
    torch's init_device_mesh(device_type, mesh_shape, mesh_dim_names=...)
    lays out the world."""
    what = f"mesh {name!r}" if name else "init_device_mesh"
    shape = _parse_shape(mesh_shape, what, "mesh_shape")
    if not _is_int(first_rank) or first_rank < 0:
        raise ReshardError(f"{what}: first_rank {first_rank!r} must be an "
                           f"integer >= 0")
    first = int(first_rank)
    ranks = range(first, first + math.prod(shape))
    return DeviceMesh(_nest(ranks, shape), mesh_dim_names, name=name)


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
        # A quantized destination: {"block": [b0, ...]} or {"mx": 32}
        # (docs/Layout.md "Quantized destinations"); the tools check it.
        self.quant: Optional[Dict[str, Any]] = None
        if quant is not None:
            if (not isinstance(quant, Mapping) or len(quant) != 1 or
                    not set(quant) <= {"block", "mx"}):
                raise ReshardError(f"quant: give {{'block': [sizes]}} or "
                                   f"{{'mx': 32}}, not {quant!r}")
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
        cut = dst.cut_block(shape, b)
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


def write_layout_dict(d: Mapping[str, Any], f: IO[str]) -> None:
    """Writes a layout dict as JSON: one mesh, one tensor a line."""
    head = ""
    if "scenario" in d:
        f.write('{"scenario": ' + json.dumps(d["scenario"]) + ',\n')
    else:
        head = "{"
    f.write(head + ' "meshes": {\n')
    f.write(",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}"
                       for k, v in d["meshes"].items()))
    f.write('},\n')
    if "topology" in d:
        f.write(' "topology": ' + json.dumps(d["topology"]) + ',\n')
    f.write(' "tensors": [\n')
    f.write(",\n".join("  " + json.dumps(t) for t in d["tensors"]))
    f.write("\n]}\n")


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*\Z")


def _str(text):
    """An MLIR string literal. MLIR's lexer knows only the escapes
    backslash-quote, backslash-backslash, n, t and two hex digits (not
    JSON's u+4 hex), so every byte outside printable ASCII goes as hex."""
    out = []
    for b in text.encode("utf-8"):
        c = chr(b)
        out.append(c if 0x20 <= b < 0x7f and c not in '"\\' else f"\\{b:02X}")
    return '"' + "".join(out) + '"'


def _sym(name):
    if _IDENT.match(name):
        return "@" + name
    return "@" + _str(name)


def _axis(a):
    return a if _IDENT.match(a) else _str(a)


def _float(x):
    x = float(x)
    if not math.isfinite(x):
        raise ReshardError(f"topology: {x} is not finite")
    s = repr(x)
    if "e" in s and "." not in s:
        s = s.replace("e", ".0e")
    return s


def _sharding_mlir(side):
    dims = []
    for d, axes in enumerate(side["dims"]):
        s = "[" + ", ".join(_axis(a) for a in axes) + "]"
        order = side.get("order", {}).get(str(d))
        if order:   # [] only on a zero-size dim: the logical order
            s += " order [" + ", ".join(f"[{a}, {n}]" for a, n in order) + "]"
        blocks = side.get("blocks", {}).get(str(d))
        if blocks is not None:
            s += " blocks [" + ", ".join(str(b) for b in blocks) + "]"
        dims.append(s)
    clause = ""
    if side.get("dim_order") is not None:
        clause += " dim_order [" + ", ".join(
            str(d) for d in side["dim_order"]) + "]"
    quant = side.get("quant")
    if quant is not None and "block" in quant:
        clause += " quant block [" + ", ".join(str(b) for b in
                                               quant["block"]) + "]"
    elif quant is not None:
        clause += f" quant mx {quant['mx']}"
    return "<[" + ", ".join(dims) + "]" + clause + ">"


def layout_dict_to_mlir(d: Mapping[str, Any]) -> str:
    """A layout in JSON form -> reshard dialect text (what the importer
    would build, without the round trip through the tools)."""
    lines = ["// Written by the reshard Python front end."]
    for name, m in d["meshes"].items():
        lines.append(f"reshard.mesh {_sym(name)} shape = {m['shape']} axes = "
                     f"[{', '.join(_str(a) for a in m['axes'])}] "
                     f"ranks = {m['ranks']}")
    topo = ""
    if d.get("topology"):
        t = d["topology"]
        name = "topology"
        while name in d["meshes"]:
            name = "_" + name
        line = (f"reshard.topology {_sym(name)} gpus_per_node = "
                f"{int(t['gpus_per_node'])} nvl_domain_size = "
                f"{int(t['nvl_domain_size'])} nvlink_GBps_per_gpu = "
                f"{_float(t['nvlink_GBps_per_gpu'])} nic_GBps_per_gpu = "
                f"{_float(t['nic_GBps_per_gpu'])}")
        for key in ("nvlink_latency_us", "nic_latency_us"):
            if key in t:
                line += f" {key} = {_float(t[key])}"
        lines.append(line)
        topo = f" topology {_sym(name)}"
    for t in d["tensors"]:
        dims = "tensor<" + "".join(f"{n}x" for n in t["shape"])
        ty = dims + DTYPES[t["dtype"]] + ">"
        # A quantized destination holds FP8 E4M3 payload.
        dst_ty = dims + "f8E4M3FN>" if "quant" in t["dst"] else ty
        lines.append(
            f"reshard.redistribute {_sym(t['name'])} from "
            f"{_sym(t['src']['mesh'])} {_sharding_mlir(t['src'])} to "
            f"{_sym(t['dst']['mesh'])} {_sharding_mlir(t['dst'])}{topo} : "
            f"{ty} -> {dst_ty}")
    return "\n".join(lines) + "\n"
