"""A layout dict (the JSON interchange format) written as JSON one tensor
a line, or as the reshard dialect's .mlir."""
from __future__ import annotations

import json
import math
import re
from typing import IO, Any, Mapping

from .dtypes import DTYPES
from .errors import ReshardError

__all__ = ["write_layout_dict", "layout_dict_to_mlir"]


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
        if quant.get("scale_fmt") == "ue8m0":
            clause += " ue8m0"
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
