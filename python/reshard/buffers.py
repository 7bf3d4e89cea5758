"""What `Plan.run` needs to know of a tensor it is handed: its address,
shape, dtype, device and whether it is contiguous and writable. torch
tensors, numpy arrays, anything with DLPack or the buffer protocol; nothing
here imports torch or numpy unless the object is one of theirs.
"""
from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from .dtypes import dtype_name
from .errors import ReshardError

# struct-module formats of the buffer protocol -> interchange dtypes.
_BUFFER_FORMATS = {"b": "int8", "B": "uint8", "h": "int16", "H": "uint16",
                   "i": "int32", "I": "uint32", "l": "int64", "L": "uint64",
                   "q": "int64", "Q": "uint64", "e": "fp16", "f": "fp32",
                   "d": "fp64"}


@dataclass
class Buffer:
    """One tensor as the plan sees it; `keep` holds what must stay alive
    while the address is used."""
    address: int
    shape: Tuple[int, ...]
    dtype: Optional[str]      # interchange name, None if unknown
    device: str               # "cpu" or "cuda:N"
    contiguous: bool
    writable: bool
    nbytes: int
    keep: Any = None


def _module(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def _dtype_or_none(dtype: Any) -> Optional[str]:
    """The interchange name of a dtype, None for one reshard cannot move."""
    try:
        return dtype_name(dtype)
    except ReshardError:
        return None


def _from_torch(t: Any) -> Buffer:
    if t.is_neg() or t.is_conj():
        # Lazy views: the bits in memory are not the values they read as.
        raise ReshardError("a negated or conjugated view: its memory is "
                           "not its values (.resolve_neg()/.resolve_conj())")
    dtype = _dtype_or_none(t.dtype)
    dev = t.device
    device = dev.type if dev.index is None else f"{dev.type}:{dev.index}"
    return Buffer(t.data_ptr(), tuple(t.shape), dtype, device,
                  t.is_contiguous(), True, t.numel() * t.element_size(), t)


def _from_numpy(a: Any) -> Buffer:
    if not a.dtype.isnative:
        raise ReshardError(f"byte order {a.dtype.str[0]!r} is not this "
                           f"machine's: pass a.astype(a.dtype.newbyteorder("
                           f"'='))")
    return Buffer(a.ctypes.data, tuple(a.shape), _dtype_or_none(a.dtype), "cpu",
                  bool(a.flags.c_contiguous), bool(a.flags.writeable),
                  a.nbytes, a)


def _from_memoryview(obj: Any) -> Buffer:
    m = memoryview(obj)
    fmt = m.format.lstrip("@=<")
    dtype = _BUFFER_FORMATS.get(fmt)
    if m.nbytes == 0 or not m.c_contiguous:
        address = 0                 # (refused as not contiguous if needed)
    elif m.readonly:
        # ctypes cannot point into a read-only buffer without copying; a
        # read-only object can only be a source, and sources are only read.
        raw = bytes(m)
        keep = ctypes.create_string_buffer(raw, len(raw))
        return Buffer(ctypes.addressof(keep), tuple(m.shape or ()), dtype,
                      "cpu", m.c_contiguous, False, m.nbytes, (keep, m))
    else:
        address = ctypes.addressof(ctypes.c_char.from_buffer(m))
    return Buffer(address, tuple(m.shape or ()), dtype, "cpu",
                  m.c_contiguous, not m.readonly, m.nbytes, m)


def describe(obj: Any) -> Buffer:
    """The Buffer of a torch tensor, a numpy array, a DLPack producer or a
    buffer-protocol object; ReshardError for anything else."""
    kind = _module(obj)
    if kind == "torch" and hasattr(obj, "data_ptr"):
        return _from_torch(obj)
    if kind == "numpy" and hasattr(obj, "ctypes"):
        return _from_numpy(obj)
    if hasattr(obj, "__dlpack__"):
        try:
            import torch
            return _from_torch(torch.from_dlpack(obj))
        except ImportError:
            import numpy
            return _from_numpy(numpy.from_dlpack(obj))
    try:
        return _from_memoryview(obj)
    except TypeError:
        raise ReshardError(f"a {type(obj).__name__} is not a tensor: pass "
                           f"a torch tensor, a numpy array, or an object "
                           f"with DLPack or the buffer protocol")


def to_host(buf: Buffer) -> Buffer:
    """A host copy of a device tensor (for digests); host tensors as they
    are."""
    if buf.device == "cpu":
        return buf
    host = buf.keep.detach().to("cpu").contiguous()
    return _from_torch(host)
