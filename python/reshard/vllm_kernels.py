"""Which MoE kernel a vLLM model runs, read off its FusedMoE layers, so
that vllm_tensors refuses to write expert weights in an order the kernel
does not read (docs/Python.md, "w13=up_gate").

vLLM's FusedMoE quant methods keep the kernel they chose as an enum
(UnquantizedMoeBackend, Fp8MoeBackend, FlashinferMoeBackend, ...; older
versions as booleans). Kernels store w13 in one of three ways:
- [gate; up] as loaded: Triton, DeepGEMM, vLLM's CUTLASS, ... ("gate_up");
- [up; gate]: FlashInfer CUTLASS (swap_w13_to_w31), gated MoE only
  ("up_gate");
- rearranged in the same shape, which reshard does not model: FlashInfer
  TRT-LLM (rows interleaved and shuffled into blocks), ROCm AITER / CK
  (16x16 tiles), MoonEP (gate and up apart) ("unmodelled").
"""
from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Dict, List, Optional

from .errors import ReshardError

# Tokens of an enum member's name (split at "_").
_UNMODELLED = {"TRTLLM", "TENSORRT", "AITER", "CK", "MOONEP"}
_UNKNOWN = {"NONE", "CPU", "XPU", "TPU", "OOT"}     # not chosen, or elsewhere


def _classify(cls: str, name: str) -> Optional[str]:
    """A backend enum member's kind, or None where it says nothing."""
    tokens = set(name.upper().split("_"))
    if tokens & _UNMODELLED or name.startswith("SM100_FI_MXFP4_BF16"):
        return "unmodelled"         # (older vLLM's TRT-LLM MXFP4 name)
    if tokens & _UNKNOWN:
        return None
    if name.startswith("FLASHINFER_CUTLASS") or name.startswith("SM90_FI_") \
            or "B12X" in tokens or ("FI" in tokens and "CUTLASS" in tokens) \
            or ("flashinfer" in cls.lower() and name == "CUTLASS"):
        return "up_gate"
    return "gate_up"


def _attrs(obj: Any) -> Dict[str, Any]:
    """An object's attributes, an nn.Module's children included."""
    d = dict(getattr(obj, "__dict__", {}))
    d.update(d.pop("_modules", None) or {})
    return d


def _methods(module: Any) -> List[Any]:
    """A FusedMoE layer's quant methods: its own and, under vLLM's modular
    wrapper (FusedMoEModularMethod), the one it wraps."""
    out = []
    for key in ("quant_method", "base_quant_method"):
        qm = getattr(module, key, None)
        while qm is not None and "moe" in type(qm).__name__.lower() and \
                all(qm is not m for m in out):
            out.append(qm)
            qm = _attrs(qm).get("old_quant_method")
    return out


def _kinds(attrs: Dict[str, Any]) -> Dict[str, str]:
    """{enum member: kind} of the backend enums a quant method (its
    attributes `attrs`) keeps, or holds in an object one level down."""
    found: Dict[str, str] = {}
    held = [_attrs(v) for v in attrs.values()
            if not isinstance(v, (type, enum.Enum))]
    for a in [attrs] + held:
        for v in a.values():
            if isinstance(v, enum.Enum) and \
                    "backend" in type(v).__name__.lower():
                kind = _classify(type(v).__name__, v.name)
                if kind is not None:
                    found[f"{type(v).__name__}.{v.name}"] = kind
    if not found:       # vLLM before the enums: booleans
        if attrs.get("rocm_aiter_moe_enabled") is True:
            found["rocm_aiter_moe_enabled"] = "unmodelled"
        elif attrs.get("flashinfer_cutlass_moe_enabled") is True:
            found["flashinfer_cutlass_moe_enabled"] = "up_gate"
    return found


def _kernel(qm: Any) -> Optional[tuple]:
    """(kind, what) of a quant method, or None where it says nothing. A
    quantization's own enum (Fp8MoeBackend, ...) goes before the
    FlashinferMoeBackend it may also keep."""
    attrs = _attrs(qm)
    found = _kinds(attrs)
    own = {k: v for k, v in found.items()
           if not k.startswith("FlashinferMoeBackend.")}
    found = own or found
    if not found:
        return None
    what = ", ".join(sorted(found))
    kinds = set(found.values())
    if "unmodelled" in kinds:
        return "unmodelled", what
    if len(kinds) > 1:
        return "unclear", what
    kind = kinds.pop()
    moe = attrs.get("moe")
    if kind == "up_gate" and getattr(moe, "is_act_and_mul", True) is False:
        kind = "gate_up"        # FlashInfer swaps a gated MoE's halves only
    return kind, what


def check_moe_kernels(layout: Any, params: Any) -> None:
    """Refuses a vLLM model (given as a module) whose FusedMoE kernels
    store the routed experts otherwise than `layout` (a Layout or its
    JSON dict) says."""
    if not hasattr(params, "named_modules"):
        return                  # a dict of tensors says nothing
    if isinstance(layout, Mapping):
        info = layout.get("scenario")
        tensors = [(t.get("name", ""), t.get("shape") or [])
                   for t in layout.get("tensors") or []
                   if isinstance(t, Mapping)]
    else:
        info = getattr(layout, "info", None)
        tensors = [(t.name, t.shape) for t in layout.tensors]
    experts = [(n, s) for n, s in tensors if ".experts." in str(n)]
    if not experts:
        return
    infer = info.get("infer") if isinstance(info, Mapping) else None
    w13 = infer.get("w13", "gate_up") if isinstance(infer, Mapping) \
        else "gate_up"
    interleaved = any(len(s) == 3 and "gate_up_proj.weight" in n
                      for n, s in experts)     # gpt-oss's [2, f, h]
    for name, mod in params.named_modules():
        for qm in _methods(mod):
            got = _kernel(qm)
            if got is None:
                continue
            kind, what = got
            where = f"vllm_tensors: {name or 'the model'} runs {what}"
            if kind == "unmodelled":
                raise ReshardError(
                    f"{where}, which rearranges the experts' weights in "
                    f"blocks or tiles (FlashInfer TRT-LLM, ROCm AITER) or "
                    f"apart; reshard does not model that layout: serve the "
                    f"refit with another MoE backend (vLLM's --moe-backend)")
            if kind == "unclear":
                raise ReshardError(
                    f"{where}: these disagree on the order of w13's gate "
                    f"and up halves; pass dict(model.named_parameters()) "
                    f"to map the parameters without this check")
            if kind == w13:
                continue
            halves = "[up; gate]" if kind == "up_gate" else "[gate; up]"
            fix = ("reshard does not model gpt-oss's interleaved w13 in "
                   "that order: serve the refit with another MoE backend"
                   if interleaved and kind == "up_gate" else
                   "build it with " + ("w13=up_gate" if kind == "up_gate"
                                       else "w13=gate_up (the default)"))
            raise ReshardError(f"{where}, whose w13 is {halves}, but the "
                               f"layout has w13={w13}: {fix}")
