"""The structure of a layout JSON dict, checked before the Python helpers
(megatron_tensors, vllm_tensors) read it: each problem named by its path
in the JSON. The compiler's importer checks the semantics (divisibility,
blocks, orders, quant) with its own diagnostics; this only keeps the
helpers from failing on a malformed dict with a bare TypeError or
KeyError, or from reading a mesh whose ranks do not fill its shape."""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .errors import ReshardError
from .layout import _is_permutation
from .mesh import _is_int


def _int(v: Any, low: int = 0) -> bool:
    return _is_int(v) and v >= low


def _ints(v: Any, low: int = 0) -> bool:
    return isinstance(v, list) and all(_int(x, low) for x in v)


def _names(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def check_layout_json(d: Mapping) -> None:
    """Raises ReshardError naming the first malformed part of d."""
    meshes = d["meshes"]
    if not isinstance(meshes, Mapping):
        raise ReshardError("layout: 'meshes' must map names to meshes")
    for name, m in meshes.items():
        _check_mesh(f"layout: meshes.{name}", m)
    tensors = d["tensors"]
    if not isinstance(tensors, list):
        raise ReshardError("layout: 'tensors' must be a list")
    seen = set()
    for k, t in enumerate(tensors):
        where = f"layout: tensors[{k}]"
        if not isinstance(t, Mapping):
            raise ReshardError(f"{where}: not an object")
        for key in ("name", "shape", "src", "dst"):
            if key not in t:
                raise ReshardError(f"{where}: missing {key!r}")
        if not isinstance(t["name"], str) or not t["name"]:
            raise ReshardError(f"{where}: name must be a non-empty string")
        where = f"layout: tensor {t['name']!r}"
        if t["name"] in seen:
            raise ReshardError(f"{where}: listed twice")
        seen.add(t["name"])
        if not _ints(t["shape"]):
            raise ReshardError(f"{where}: shape must be a list of integers "
                               f">= 0, not {t['shape']!r}")
        for side in ("src", "dst"):
            _check_side(f"{where}.{side}", t[side], len(t["shape"]), meshes)
        _check_extra(where, t)


def _check_extra(where: str, t: Mapping) -> None:
    """The keys beside a tensor's sides that the helpers read."""
    if "scales_of" in t:
        raise ReshardError(f"{where}: scales_of is not a layout key (a "
                           f"quantized tensor's scales are implied)")
    for key in ("copy_of", "fused_into"):
        if key in t and (not isinstance(t[key], str) or not t[key]):
            raise ReshardError(f"{where}: {key} must be a tensor name")
    off = t.get("fused_offset", {})
    if not isinstance(off, Mapping) or not all(_int(v)
                                               for v in off.values()):
        raise ReshardError(f"{where}: fused_offset must map sides to row "
                           f"offsets")


def _check_mesh(where: str, m: Any) -> None:
    if not isinstance(m, Mapping) or not all(
            k in m for k in ("shape", "axes", "ranks")):
        raise ReshardError(f"{where}: give shape, axes and ranks")
    shape, axes, ranks = m["shape"], m["axes"], m["ranks"]
    if not _ints(shape, 1) or not _names(axes) or len(axes) != len(shape):
        raise ReshardError(f"{where}: shape must be sizes >= 1, one axis "
                           f"name each (shape {shape!r}, axes {axes!r})")
    if not _ints(ranks) or len(ranks) != math.prod(shape) or \
            len(set(ranks)) != len(ranks):
        raise ReshardError(f"{where}: ranks must be {math.prod(shape)} "
                           f"distinct integers >= 0 (shape {shape}), not "
                           f"{ranks!r}")


def _check_side(where: str, s: Any, ndim: int, meshes: Mapping) -> None:
    if not isinstance(s, Mapping) or "mesh" not in s or "dims" not in s:
        raise ReshardError(f"{where}: give mesh and dims")
    if not isinstance(s["mesh"], str) or s["mesh"] not in meshes:
        raise ReshardError(f"{where}: no mesh {s['mesh']!r}")
    dims = s["dims"]
    if not isinstance(dims, list) or len(dims) != ndim or \
            not all(_names(d) for d in dims):
        raise ReshardError(f"{where}: dims must be {ndim} lists of mesh "
                           f"axis names, not {dims!r}")
    for key in ("blocks", "order", "quant"):
        if key in s and not isinstance(s[key], Mapping):
            raise ReshardError(f"{where}: {key} must be an object")
    for d, sizes in s.get("blocks", {}).items():
        if not _ints(sizes, 1):
            raise ReshardError(f"{where}: blocks[{d}] must be sizes >= 1")
    for d, runs in s.get("order", {}).items():
        if not isinstance(runs, list) or not all(
                _ints(r) and len(r) == 2 for r in runs):
            raise ReshardError(f"{where}: order[{d}] must be [start, "
                               f"length] pairs")
    perm = s.get("dim_order", list(range(ndim)))   # null is refused
    if not _is_permutation(perm, ndim):
        raise ReshardError(f"{where}: dim_order must list every dim "
                           f"0..{ndim - 1} once, not {perm!r}")
