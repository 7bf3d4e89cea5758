"""Element types: the interchange format's names and the torch / numpy
dtypes that spell the same thing.

Every dtype argument of the package goes through dtype_name(), so a layout
can be given "bf16", "bfloat16", "torch.bfloat16", torch.bfloat16,
numpy.float32 or numpy.dtype("float32") alike. Nothing here imports torch
or numpy: a torch dtype is recognised by its type (torch.dtype, whose str()
is "torch.bfloat16"), a numpy dtype by its `.name`, a numpy scalar type by
its `__name__`.
"""
from __future__ import annotations

from typing import Any, Optional

from .errors import ReshardError

DTYPES = {  # JSON name -> MLIR element type
    "bf16": "bf16", "fp16": "f16", "fp32": "f32", "fp64": "f64",
    "int8": "i8", "uint8": "ui8", "int16": "i16", "uint16": "ui16",
    "int32": "i32", "uint32": "ui32", "int64": "i64", "uint64": "ui64",
    "fp8e4m3": "f8E4M3FN", "fp8e5m2": "f8E5M2",
}
DTYPE_BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "fp64": 8, "int8": 1,
               "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
               "int64": 8, "uint64": 8, "fp8e4m3": 1, "fp8e5m2": 1}

# torch's and numpy's (and ml_dtypes') name of each JSON dtype:
# str(torch.bfloat16) == "torch.bfloat16", numpy.dtype("float32").name ==
# "float32", ml_dtypes.float8_e4m3fn.__name__ == "float8_e4m3fn".
TORCH_DTYPES = {
    "bfloat16": "bf16", "float16": "fp16", "float32": "fp32",
    "float64": "fp64", "int8": "int8", "uint8": "uint8", "int16": "int16",
    "uint16": "uint16", "int32": "int32", "uint32": "uint32",
    "int64": "int64", "uint64": "uint64", "float8_e4m3fn": "fp8e4m3",
    "float8_e5m2": "fp8e5m2",
}
# torch's other names of the same dtypes (torch.half is torch.float16),
# taken only with the "torch." prefix: numpy reads "float", "int" and
# "long" otherwise (float64, int64).
_TORCH_ALIASES = {"half": "fp16", "float": "fp32", "double": "fp64",
                  "short": "int16", "int": "int32", "long": "int64"}

DTypeLike = Any
"""A JSON dtype name ("bf16"), a torch or numpy name ("bfloat16",
"torch.bfloat16"), a torch dtype, a numpy dtype or numpy scalar type."""


def _key(dtype: Any) -> Optional[str]:
    """The name a dtype object goes by, or None when it is none of ours."""
    if isinstance(dtype, str):
        return dtype
    t = type(dtype)
    if t.__module__ == "torch" and t.__name__ == "dtype":
        return str(dtype)                            # "torch.bfloat16"
    if isinstance(dtype, type):
        # numpy.float32, ml_dtypes.bfloat16; not Python's float or int,
        # whose sizes are no dtype's.
        if dtype.__module__ == "builtins":
            return None
        return getattr(dtype, "__name__", None)
    name = getattr(dtype, "name", None)              # numpy.dtype
    if isinstance(name, str):
        return name
    s = str(dtype)                                   # a torch look-alike
    return s if s.startswith("torch.") else None


def dtype_name(dtype: DTypeLike, what: Optional[str] = None) -> str:
    """The interchange format's name of a dtype ("bf16", "fp32", ...).

    Takes the JSON names themselves, torch and numpy names ("bfloat16",
    "torch.float8_e4m3fn"), torch dtypes, numpy dtypes and numpy scalar
    types; anything else is a ReshardError naming the accepted ones
    (`what` prefixes the message).
    """
    if isinstance(dtype, str) and dtype in DTYPES:
        return dtype
    key = _key(dtype)
    out = None
    if key is not None:
        if key.startswith("torch."):
            key = key[len("torch."):]
            out = TORCH_DTYPES.get(key) or _TORCH_ALIASES.get(key)
        else:
            out = key if key in DTYPES else TORCH_DTYPES.get(key)
    if out is None:
        prefix = f"{what}: " if what else ""
        raise ReshardError(
            f"{prefix}unknown dtype {dtype!r}: it has no reshard "
            f"equivalent; give one of {' '.join(DTYPES)}, or the torch or "
            f"numpy dtype "
            f"({', '.join('torch.' + k for k in TORCH_DTYPES)})")
    return out
