"""reshard's Python front end: meshes and DTensor-style placements, model
presets from Hugging Face configs, Megatron-Core and vLLM layouts, and
drivers for the reshard tools. Standard library only (matplotlib for plots,
torch for DTensor interop, both optional). Conventions: docs/Python.md.
"""
from .errors import ReshardError
from .layout import DeviceMesh, Layout, Replicate, Shard, Sharding, Tensor
from .models import Model, from_hf_config, load_config, model_params
from .refit import SCENARIOS, build_layout
from .topology import TOPOLOGIES

__all__ = ["ReshardError", "DeviceMesh", "Layout", "Replicate", "Shard",
           "Sharding", "Tensor", "Model", "from_hf_config", "load_config",
           "model_params", "SCENARIOS", "build_layout", "TOPOLOGIES"]
