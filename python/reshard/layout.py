"""Meshes, DTensor-style placements and whole-model layouts.

The semantics are DESIGN.md's: a dim sharded over axes (a1, ..., am) is
split as nested torch.chunk, a1 major; blocks are chunked one by one and
concatenated per device; axes that shard no dim replicate. A Layout writes
the JSON interchange format (README.md) and the reshard dialect's .mlir.
"""
import json
import math
import re
from dataclasses import dataclass, field

from .errors import ReshardError
from .topology import get_topology

DTYPES = {  # JSON name -> MLIR element type
    "bf16": "bf16", "fp16": "f16", "fp32": "f32", "fp64": "f64",
    "int8": "i8", "uint8": "ui8", "int16": "i16", "uint16": "ui16",
    "int32": "i32", "uint32": "ui32", "int64": "i64", "uint64": "ui64",
    "fp8e4m3": "f8E4M3FN", "fp8e5m2": "f8E5M2",
}
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp64": 8, "int8": 1,
               "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
               "int64": 8, "uint64": 8, "fp8e4m3": 1, "fp8e5m2": 1}


class DeviceMesh:
    """An N-D array of global ranks, row-major, one name per axis.

    Like torch.distributed.device_mesh.DeviceMesh, but the ranks are
    explicit and it needs no process group.
    """

    def __init__(self, shape, axis_names, ranks=None, name=None):
        self.shape = [int(s) for s in shape]
        self.axis_names = [str(a) for a in axis_names]
        size = math.prod(self.shape)
        self.ranks = list(range(size)) if ranks is None else \
            [int(r) for r in ranks]
        self.name = name
        what = f"mesh {name!r}" if name else "mesh"
        if len(self.axis_names) != len(self.shape):
            raise ReshardError(f"{what}: {len(self.shape)} dims but "
                               f"{len(self.axis_names)} axis names")
        if len(set(self.axis_names)) != len(self.axis_names):
            raise ReshardError(f"{what}: duplicate axis names "
                               f"{self.axis_names}")
        if any(s <= 0 for s in self.shape):
            raise ReshardError(f"{what}: sizes must be positive: {self.shape}")
        if len(self.ranks) != size:
            raise ReshardError(f"{what}: shape {self.shape} has {size} "
                               f"devices but {len(self.ranks)} ranks")
        if len(set(self.ranks)) != size or min(self.ranks) < 0:
            raise ReshardError(f"{what}: ranks must be distinct and >= 0")
        self._index = {r: i for i, r in enumerate(self.ranks)}

    def size(self, axis):
        return self.shape[self.axis_names.index(axis)]

    def coords(self, rank):
        """Mesh coordinates of a global rank, or None if it is not here."""
        i = self._index.get(rank)
        if i is None:
            return None
        out = []
        for s in reversed(self.shape):
            i, c = divmod(i, s)
            out.append(c)
        return tuple(reversed(out))

    def to_json(self):
        return {"shape": self.shape, "axes": self.axis_names,
                "ranks": self.ranks}

    def same_as(self, other):
        return self.to_json() == other.to_json()

    def __repr__(self):
        return (f"DeviceMesh({self.shape}, {self.axis_names}, "
                f"ranks={self.ranks}, name={self.name!r})")


@dataclass(frozen=True)
class Shard:
    """Split tensor dim `dim` over a mesh axis (torch.chunk)."""
    dim: int


@dataclass(frozen=True)
class Replicate:
    """Every device along the mesh axis holds the whole (local) tensor."""


def chunk_range(start, n, parts, index):
    """Piece `index` of torch.chunk of [start, start + n) into `parts`, as
    (start, length); trailing pieces may be short or empty."""
    c = -(-n // parts) if n else 0
    off = min(index * c, n)
    return start + off, min(c, n - off)


def shard_segments(shape, mesh_shape, axis_names, dims, blocks, coords):
    """Per tensor dim, the global (start, length) ranges the device at mesh
    `coords` holds, in its local order (DESIGN.md): each block of the dim
    (blocks: {dim: sizes}) split by nested torch.chunk over the dim's axes,
    major to minor; empty ranges left out."""
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
            if length:
                segs.append((start, length))
            begin += b
        out.append(tuple(segs))
    return tuple(out)


class Sharding:
    """One side of a redistribution: a mesh, per-dim axis lists, blocks.

    dims[d] lists the mesh axes that split tensor dim d, major to minor.
    blocks maps a dim to block sizes (fused weights, DESIGN.md "Blocks").
    """

    def __init__(self, mesh, dims, blocks=None):
        self.mesh = mesh
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
    def from_placements(cls, mesh, placements, ndim, blocks=None):
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
        return cls(mesh, dims, blocks)

    def check_blocks(self, shape, what="blocks"):
        """Blocks must be sizes >= 0 that add up to their dim (DESIGN.md)."""
        for d, parts in self.blocks.items():
            if d >= len(shape) or sum(parts) != shape[d] or any(
                    not isinstance(b, int) or b < 0 for b in parts):
                n = shape[d] if d < len(shape) else None
                raise ReshardError(f"{what}: blocks {parts} of dim {d} must be "
                                   f"sizes >= 0 adding up to the dim ({n})")

    def local_shape(self, shape, rank):
        """This rank's local shard shape, or None if it is not in the mesh."""
        self.check_blocks(shape)
        c = self.mesh.coords(rank)
        if c is None:
            return None
        return [sum(length for _, length in segs) for segs in shard_segments(
            shape, self.mesh.shape, self.mesh.axis_names, self.dims,
            self.blocks, c)]

    def to_json(self, mesh_name=None):
        out = {"mesh": mesh_name or self.mesh.name, "dims": self.dims}
        if self.blocks:
            out["blocks"] = {str(k): v for k, v in self.blocks.items()}
        return out


@dataclass
class Tensor:
    """One redistribution: a tensor from its src sharding to its dst."""
    name: str
    shape: list
    dtype: str
    src: Sharding
    dst: Sharding
    extra: dict = field(default_factory=dict)   # extra JSON keys, kept

    def nbytes(self):
        return math.prod(self.shape) * DTYPE_BYTES[self.dtype]

    def to_json(self, names):
        d = {"name": self.name, "shape": self.shape, "dtype": self.dtype}
        d.update(self.extra)
        d["src"] = self.src.to_json(names[id(self.src.mesh)])
        d["dst"] = self.dst.to_json(names[id(self.dst.mesh)])
        return d


class Layout:
    """Every tensor of a model with its two shardings, and a topology.

    meshes: optional order of the meshes in the output (the others follow
    in first use); info: written as the JSON's "scenario" key.
    """

    def __init__(self, tensors=(), topology=None, meshes=(), info=None):
        self.tensors = list(tensors)
        self.topology = None if topology is None else get_topology(topology)
        self.info = info
        self._meshes = list(meshes)

    def add(self, name, shape, dtype, src, dst, **extra):
        if dtype not in DTYPES:
            raise ReshardError(f"{name}: unknown dtype {dtype!r} (one of "
                               f"{' '.join(DTYPES)})")
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                   for n in shape):
            raise ReshardError(f"{name}: shape {list(shape)} must hold "
                               f"integers >= 0")
        for side, s in (("src", src), ("dst", dst)):
            if len(s.dims) != len(shape):
                raise ReshardError(f"{name}: {side} sharding has "
                                   f"{len(s.dims)} dims, tensor {len(shape)}")
            s.check_blocks(shape, f"{name}: {side}")
        t = Tensor(name, list(shape), dtype, src, dst, extra)
        self.tensors.append(t)
        return t

    def mesh_names(self):
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

    def to_dict(self):
        names, meshes = self.mesh_names()
        out = {}
        if self.info is not None:
            out["scenario"] = self.info
        out["meshes"] = {n: m.to_json() for n, m in meshes.items()}
        if self.topology is not None:
            out["topology"] = dict(self.topology)
        out["tensors"] = [t.to_json(names) for t in self.tensors]
        return out

    def write_json(self, f):
        """The JSON, one mesh per line and one tensor per line (f: path or
        file); diagnostics of the importer then point at a readable line."""
        if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
            with open(f, "w") as out:
                return self.write_json(out)
        write_layout_dict(self.to_dict(), f)

    def to_mlir(self):
        return layout_dict_to_mlir(self.to_dict())

    def write_mlir(self, path):
        with open(path, "w") as f:
            f.write(self.to_mlir())


def write_layout_dict(d, f):
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
        blocks = side.get("blocks", {}).get(str(d))
        if blocks is not None:
            s += " blocks [" + ", ".join(str(b) for b in blocks) + "]"
        dims.append(s)
    return "<[" + ", ".join(dims) + "]>"


def layout_dict_to_mlir(d):
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
        ty = "tensor<" + "".join(f"{n}x" for n in t["shape"]) + \
            DTYPES[t["dtype"]] + ">"
        lines.append(
            f"reshard.redistribute {_sym(t['name'])} from "
            f"{_sym(t['src']['mesh'])} {_sharding_mlir(t['src'])} to "
            f"{_sym(t['dst']['mesh'])} {_sharding_mlir(t['dst'])}{topo} : "
            f"{ty} -> {ty}")
    return "\n".join(lines) + "\n"
