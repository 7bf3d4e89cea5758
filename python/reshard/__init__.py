"""reshard's Python front end: meshes and DTensor-style placements, model
presets from Hugging Face configs, Megatron-Core and vLLM layouts, and
drivers for the reshard tools, and a runtime that compiles a plan and runs
it on torch tensors or numpy arrays (reshard.compile, reshard.Plan). Standard library only (matplotlib for plots,
torch for DTensor interop, both optional). Conventions: docs/Python.md.
"""
from __future__ import annotations

import warnings
from typing import Any

from .build import compile
from .comms import NcclComm
from .dtypes import dtype_name
from .errors import ReshardError
from .layout import (DeviceMesh, Layout, Redistribution, Replicate, Shard,
                     Sharding, init_device_mesh)
from .models import Model, from_hf_config, load_config, model_params
from .names import megatron_tensors, vllm_tensors
from .refit import SCENARIOS, build_layout
from .runtime import Plan
from .topology import TOPOLOGIES

__all__ = ["ReshardError", "DeviceMesh", "init_device_mesh", "Layout",
           "Redistribution", "Replicate", "Shard", "Sharding", "dtype_name",
           "Model", "from_hf_config", "load_config", "model_params",
           "SCENARIOS", "build_layout", "TOPOLOGIES", "compile", "Plan",
           "NcclComm", "megatron_tensors", "vllm_tensors"]


def __getattr__(name: str) -> Any:
    # Deprecated names, kept for one release (not in __all__).
    if name == "Tensor":
        warnings.warn("reshard.Tensor is deprecated: it is called "
                      "reshard.Redistribution now", DeprecationWarning,
                      stacklevel=2)
        return Redistribution
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
