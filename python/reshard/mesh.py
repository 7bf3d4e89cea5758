"""Device meshes: global ranks arranged on named axes.

A mesh is a nested list of distinct global ranks (row-major: the last axis
fastest) with one name per axis, as torch's DeviceMesh; docs/Layout.md
gives its semantics.
"""
from __future__ import annotations

import inspect
import math
import numbers
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .errors import ReshardError

__all__ = ["DeviceMesh", "init_device_mesh", "MeshLike"]

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
