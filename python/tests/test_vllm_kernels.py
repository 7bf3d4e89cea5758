"""vllm_tensors, given the vLLM model, reads each FusedMoE's kernel off
its quant method (reshard/vllm_kernels.py) and refuses a refit whose
experts the kernel stores otherwise than the layout: FlashInfer CUTLASS's
[up; gate] against w13=gate_up and the reverse, and the kernels that
rearrange the weights in the same shape (FlashInfer TRT-LLM, ROCm AITER,
MoonEP), which reshard does not model. The quant methods here carry
vLLM's enum and attribute names; a dict of tensors is never checked."""
import enum
import json
import os
import sys
import types

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import reshard  # noqa: E402
from reshard.errors import ReshardError  # noqa: E402
from reshard.refit import build_layout  # noqa: E402
from test_names import Module, vllm_params  # noqa: E402
from test_orders import moe  # noqa: E402


class UnquantizedMoeBackend(enum.Enum):
    NONE = 0
    FLASHINFER_CUTLASS = 1
    AITER = 2
    TRITON = 3
    FLASHINFER_TRTLLM = 4
    CPU = 5


class Fp8MoeBackend(enum.Enum):
    FLASHINFER_TRTLLM = 1
    FLASHINFER_CUTLASS = 2
    DEEPGEMM = 3
    VLLM_CUTLASS = 4


class FlashinferMoeBackend(enum.Enum):
    CUTLASS = 1
    TENSORRT_LLM = 2


class Mxfp4MoeBackend(enum.Enum):
    FLASHINFER_TRTLLM_MXFP4_BF16 = 1
    SM100_FI_MXFP4_BF16 = 2
    SM90_FI_MXFP4_BF16 = 3
    CUTLASS_BLOCK_SCALED_GROUPED_GEMM = 4


class UnquantizedFusedMoEMethod:
    pass


class Fp8MoEMethod:
    pass


class FusedMoEModularMethod:
    """vLLM's wrapper, an nn.Module: the method it wraps is a child
    (in _modules), not an attribute."""

    def __init__(self, old):
        self.__dict__["_modules"] = {"old_quant_method": old}


def method(cls=UnquantizedFusedMoEMethod, *values, gated=True, **flags):
    """A quant method keeping `values` (the first as its own attribute,
    the rest in an object it holds) and boolean `flags`."""
    qm = cls()
    qm.moe = types.SimpleNamespace(is_act_and_mul=gated)
    qm.kernel = types.SimpleNamespace()
    for k, v in enumerate(values):
        setattr(qm if k == 0 else qm.kernel, f"backend{k}", v)
    qm.experts_cls = Fp8MoeBackend       # a class held: says nothing
    for k, v in flags.items():
        setattr(qm, k, v)
    return qm


def model(fake, qm):
    """The fake vLLM parameters as a module with one FusedMoE layer."""
    mod = Module(fake.params)
    moe_layer = types.SimpleNamespace(quant_method=qm)
    mod.named_modules = lambda: iter([("", mod),
                                      ("model.layers.1.mlp.experts",
                                       moe_layer)])
    return mod


U, F8, FI, MX = (UnquantizedMoeBackend, Fp8MoeBackend, FlashinferMoeBackend,
                 Mxfp4MoeBackend)
DISAGREE = "disagree on the order of w13's gate and up halves"
UNMODELLED = "rearranges the experts' weights"
NEEDS_UP_GATE = (r"whose w13 is \[up; gate\], but the layout has "
                 r"w13=gate_up: build it with w13=up_gate")
NEEDS_GATE_UP = r"whose w13 is \[gate; up\], but the layout has w13=up_gate"
CASES = [
    # (layout's w13, quant method, error or None)
    ("gate_up", method(UnquantizedFusedMoEMethod, U.TRITON), None),
    ("gate_up", method(Fp8MoEMethod, F8.DEEPGEMM), None),
    ("gate_up", method(Fp8MoEMethod, F8.VLLM_CUTLASS), None),
    ("gate_up", method(Fp8MoEMethod, MX.CUTLASS_BLOCK_SCALED_GROUPED_GEMM),
     None),
    ("up_gate", method(UnquantizedFusedMoEMethod, U.FLASHINFER_CUTLASS),
     None),
    ("up_gate", method(Fp8MoEMethod, F8.FLASHINFER_CUTLASS,
                       FI.CUTLASS), None),
    ("up_gate", method(Fp8MoEMethod, FI.CUTLASS), None),
    ("up_gate", method(Fp8MoEMethod, MX.SM90_FI_MXFP4_BF16), None),
    ("gate_up", method(), None),                    # nothing said
    ("up_gate", method(UnquantizedFusedMoEMethod, U.NONE), None),
    ("up_gate", method(UnquantizedFusedMoEMethod, U.CPU), None),
    # The quantization's own enum goes before FlashinferMoeBackend.
    ("gate_up", method(Fp8MoEMethod, F8.DEEPGEMM, FI.CUTLASS), None),
    # Non-gated: FlashInfer CUTLASS swaps nothing.
    ("gate_up", method(UnquantizedFusedMoEMethod, U.FLASHINFER_CUTLASS,
                       gated=False), None),
    # Under the modular wrapper, the wrapped method's enum.
    ("up_gate", FusedMoEModularMethod(method(UnquantizedFusedMoEMethod,
                                             U.FLASHINFER_CUTLASS)), None),
    ("gate_up", FusedMoEModularMethod(method(UnquantizedFusedMoEMethod,
                                             U.FLASHINFER_CUTLASS)),
     NEEDS_UP_GATE),
    # vLLM before the enums: booleans.
    ("up_gate", method(flashinfer_cutlass_moe_enabled=True), None),
    ("gate_up", method(flashinfer_cutlass_moe_enabled=True), NEEDS_UP_GATE),
    ("gate_up", method(rocm_aiter_moe_enabled=True), UNMODELLED),
    ("gate_up", method(UnquantizedFusedMoEMethod, U.FLASHINFER_TRTLLM),
     UNMODELLED),
    ("up_gate", method(Fp8MoEMethod, F8.FLASHINFER_TRTLLM), UNMODELLED),
    ("up_gate", method(Fp8MoEMethod, FI.TENSORRT_LLM), UNMODELLED),
    ("gate_up", method(Fp8MoEMethod, MX.FLASHINFER_TRTLLM_MXFP4_BF16),
     UNMODELLED),
    ("gate_up", method(Fp8MoEMethod, MX.SM100_FI_MXFP4_BF16), UNMODELLED),
    ("gate_up", method(UnquantizedFusedMoEMethod, U.AITER), UNMODELLED),
    ("gate_up", method(UnquantizedFusedMoEMethod, U.FLASHINFER_CUTLASS),
     NEEDS_UP_GATE),
    ("up_gate", method(UnquantizedFusedMoEMethod, U.TRITON), NEEDS_GATE_UP),
    ("gate_up", method(Fp8MoEMethod, F8.FLASHINFER_CUTLASS, F8.DEEPGEMM),
     DISAGREE),
]


@pytest.mark.parametrize("w13,qm,error", CASES)
def test_moe_kernel_must_store_w13_as_the_layout_says(w13, qm, error):
    m = moe()
    infer = "tp=2" + (",w13=up_gate" if w13 == "up_gate" else "")
    lay = build_layout(m, "tp=2,ep=2", infer, layers=2)
    first = lay.info["infer"]["ranks"][0]
    fake = vllm_params(m, infer, 0, 2)
    for layout in (lay, json.loads(json.dumps(lay.to_dict()))):
        if error is None:
            assert reshard.vllm_tensors(layout, model(fake, qm), first)
        else:
            with pytest.raises(ReshardError, match=error):
                reshard.vllm_tensors(layout, model(fake, qm), first)
        # A dict of the same tensors is mapped unchecked.
        assert reshard.vllm_tensors(layout, fake.params, first)


def test_gpt_oss_under_flashinfer_cutlass_is_refused_as_unmodelled():
    """gpt-oss's w13 interleaves gate and up; w13=up_gate cannot say it
    (refused by the preset), so the message does not suggest it."""
    from orders_ref import GPT_OSS
    from reshard.models import from_hf_config
    m = from_hf_config(GPT_OSS)
    lay = build_layout(m, "tp=2,ep=2", "tp=2", layers=2)
    fake = vllm_params(m, "tp=2", 0, 2)
    qm = method(UnquantizedFusedMoEMethod, U.FLASHINFER_CUTLASS)
    with pytest.raises(ReshardError, match="does not model gpt-oss's "
                                           "interleaved w13 in that order"):
        reshard.vllm_tensors(lay, model(fake, qm),
                             lay.info["infer"]["ranks"][0])


def test_layouts_without_routed_experts_are_not_checked():
    from orders_ref import small
    lay = build_layout(small(8, 4, 4), "tp=2", "tp=2")
    m = reshard.models.scale_model(small(8, 4, 4), 1, (2, 2))
    fake = vllm_params(m, "tp=2", 0, lay.info["layers"])
    qm = method(UnquantizedFusedMoEMethod, U.FLASHINFER_TRTLLM)
    assert reshard.vllm_tensors(lay, model(fake, qm),
                                lay.info["infer"]["ranks"][0])
