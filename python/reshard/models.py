"""Model parameter lists from a Hugging Face config.json.

Supported model_type values: llama, mistral, qwen2, qwen3 (dense),
qwen3_moe, qwen3_next (Gated DeltaNet linear attention in most layers,
gated attention in the others, a gated shared expert), qwen3_5 /
qwen3_5_moe (the same with flat projections, under text_config), mixtral
(block_sparse_moe: router and 8 experts per layer),
glm4_moe (GLM-4.5/4.6/4.7: GQA with q/k/v biases and optional q/k norms,
dense first layers, shared and routed experts), deepseek_v3 / deepseek_v2
/ kimi_k2 (MLA, dense first layers, shared and routed experts, router),
gpt_oss (attention sinks, biases everywhere, experts' gate/up rows
interleaved: each expert's gate_up as [2, f, h], vLLM's side stored with
a dim order, and vLLM gpt_oss.py's names);
attn_output_gate (Qwen3-Next's gated attention)
on the GQA ones. Names are the HF checkpoint names, except where
vLLM fuses checkpoint tensors into one parameter (qkv_proj, gate_up_proj,
fused_qkv_a_proj): then the fused parameter is the tensor and its dim 0
carries blocks (docs/Python.md "Tensor names").
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import Any, List, Mapping, Optional, Tuple, Union

from .dtypes import DTypeLike, dtype_name
from .errors import ReshardError, read_json

_HERE = os.path.dirname(os.path.abspath(__file__))
# examples/models/ of the source tree; a wheel carries none.
MODELS_DIR = os.path.join(os.path.dirname(os.path.dirname(_HERE)),
                          "examples", "models")

# Published totals (model cards), to check the parameter lists against.
PUBLIC = {
    "llama-3.1-70b": ("meta-llama/Llama-3.1-70B", 70_550_000_000, "70.55B"),
    "qwen3-235b-a22b": ("Qwen/Qwen3-235B-A22B", 235_090_000_000, "235.09B"),
    "deepseek-v3": ("deepseek-ai/DeepSeek-V3", 671_030_000_000,
                    "671.03B (no MTP)"),
    "mixtral-8x7b": ("mistralai/Mixtral-8x7B-v0.1", 46_700_000_000,
                     "46.7B"),
    # The Hub's count for moonshotai/Kimi-K2-Instruct (the model card says
    # "1T total"); the DeepSeek-V3 architecture with 384 routed experts.
    "kimi-k2": ("moonshotai/Kimi-K2-Instruct", 1_030_000_000_000, "1.03T"),
    # OpenAI's gpt-oss model card (its table of parameter counts).
    "gpt-oss-120b": ("openai/gpt-oss-120b", 116_830_000_000, "116.83B"),
    "gpt-oss-20b": ("openai/gpt-oss-20b", 20_910_000_000, "20.91B"),
}

_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}
DENSE_TYPES = ("llama", "mistral", "qwen2", "qwen3", "qwen3_5")
MOE_TYPES = ("qwen3_moe", "qwen3_next", "qwen3_5_moe", "mixtral",
             "glm4_moe", "deepseek_v3", "deepseek_v2", "kimi_k2", "gpt_oss")
# Gated DeltaNet hybrids: Qwen3-Next groups in_proj_qkvz / in_proj_ba per
# key head; Qwen3.5 keeps [q; k; v] and z, b, a flat.
GDN_TYPES = ("qwen3_next", "qwen3_5", "qwen3_5_moe")
MLA_TYPES = ("deepseek_v3", "deepseek_v2", "kimi_k2")


@dataclass(frozen=True)
class Model:
    name: str
    hf_id: str
    layers: int              # num_hidden_layers
    hidden: int              # hidden_size
    heads: int               # num_attention_heads
    kv_heads: int            # num_key_value_heads (GQA); == heads for MLA
    head_dim: int            # head_dim (GQA)
    intermediate: int        # dense MLP intermediate_size
    vocab: int               # vocab_size
    public_params: Optional[int] = None  # published total, as published
    public_label: Optional[str] = None
    model_type: str = "llama"
    dtype: DTypeLike = "bf16"  # torch_dtype; kept as the JSON name
    tie_embeddings: bool = False  # tie_word_embeddings: no lm_head tensor
    qkv_bias: bool = False   # q/k/v biases (Qwen2; attention_bias)
    o_bias: bool = False     # o_proj bias (attention_bias, not Qwen2)
    mlp_bias: bool = False   # Llama mlp_bias: gate/up/down biases
    qk_norm: bool = False    # Qwen3: q_norm / k_norm over head_dim
    # Attention output gate (Qwen3-Next; config attn_output_gate, the key
    # vLLM reads): q_proj holds [q_h; gate_h] per head, 2 * heads * head_dim
    # rows; Megatron-Core's attention_output_gate.
    attn_output_gate: bool = False
    experts: int = 0         # routed experts per MoE layer (0: dense model)
    moe_intermediate: int = 0
    shared_experts: int = 0
    moe_prefix: str = "mlp"  # Mixtral: block_sparse_moe
    expert_names: Tuple[str, str] = ("gate_up_proj", "down_proj")  # w13, w2
    dense_layers: Tuple[int, ...] = ()  # dense MLP layers of an MoE model
    score_bias: bool = False  # router e_score_correction_bias (DeepSeek)
    # n_group: groups of routed experts for grouped top-k routing (DeepSeek);
    # 0 for models without it. vLLM's round-robin placement needs > 1.
    expert_groups: int = 0
    mla: bool = False
    q_lora_rank: int = 0     # 0: DeepSeek-V2-Lite style q_proj
    kv_lora_rank: int = 0
    qk_nope_head_dim: int = 0
    qk_rope_head_dim: int = 0
    v_head_dim: int = 0
    # Qwen3-Next: its one shared expert's size (shared_expert_intermediate_
    # size; 0: moe_intermediate * shared_experts) and sigmoid gate.
    shared_ffn: int = 0
    shared_gate: bool = False
    # Qwen3-Next's Gated DeltaNet layers (layer_types "linear_attention")
    # and their sizes: key and value heads, head dims, conv kernel; flat
    # (Qwen3.5): in_proj_qkvz is [q; k; v; z] of all heads, not per group.
    linear_layers: Tuple[int, ...] = ()
    gdn_flat: bool = False
    lin_k_heads: int = 0
    lin_v_heads: int = 0
    lin_k_dim: int = 0
    lin_v_dim: int = 0
    lin_conv: int = 0
    # gpt-oss (vLLM gpt_oss.py): per-head attention sinks, a router with a
    # bias (mlp.router), experts with biases whose gate and up rows
    # interleave (each expert's gate_up is a [2, f, h] tensor), and
    # vLLM's names (model.embedding, attn.).
    gpt_oss: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", dtype_name(self.dtype, self.name))

    def is_moe(self, layer: int) -> bool:
        return self.experts > 0 and layer not in self.dense_layers

    def spmoe_replicates_shared(self) -> bool:
        """Whether vLLM replicates the shared experts under sequence-
        parallel MoE: deepseek_v2.py does (disable_tp), and qwen3_next.py
        since vLLM PR #39181 (its Qwen2MoeMLP's is_sequence_parallel);
        glm4_moe.py does not."""
        return self.mla or self.shared_gate

    def shared_size(self) -> int:
        """The shared experts' intermediate size (all of them together)."""
        return self.shared_ffn or self.moe_intermediate * self.shared_experts


# Dimensions --scale-down divides (counts of heads, experts, layers stay).
SCALED_DIMS = ("hidden", "head_dim", "intermediate", "moe_intermediate",
               "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
               "qk_rope_head_dim", "v_head_dim", "shared_ffn", "lin_k_dim",
               "lin_v_dim")


def _need(cfg, what, *keys):
    missing = [k for k in keys if cfg.get(k) is None]
    if missing:
        raise ReshardError(f"{what}: config.json lacks {', '.join(missing)} "
                           f"(model_type {cfg.get('model_type')!r})")
    for k in keys:
        _check_int(cfg, what, k)
    return [cfg[k] for k in keys]


def _check_int(cfg, what, k):
    v = cfg[k]
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise ReshardError(f"{what}: config.json {k}={v!r} is not a "
                           f"non-negative integer")
    return v


def _flag(cfg, what, key, default=False):
    """An optional true/false field: absent or null give the default."""
    v = cfg.get(key)
    if v is None:
        return default
    if not isinstance(v, bool):
        raise ReshardError(f"{what}: config.json {key}={v!r} is not true "
                           f"or false")
    return v


def _opt(cfg, what, key, default=0):
    """An optional integer field: absent, null or 0 give the default."""
    if cfg.get(key) is None:
        return default
    return _check_int(cfg, what, key) or default


def from_hf_config(cfg: Mapping[str, Any], name: Optional[str] = None
                   ) -> Model:
    """A Hugging Face config.json (as a dict) -> Model."""
    if not isinstance(cfg, dict):
        raise ReshardError("config.json must hold a JSON object")
    cfg = _text_config(cfg)
    mt = cfg.get("model_type")
    name = name or os.path.basename(str(cfg.get("_name_or_path") or mt))
    what = f"model {name!r}"
    if mt not in DENSE_TYPES + MOE_TYPES:
        raise ReshardError(
            f"{what}: unsupported model_type {mt!r} (supported: "
            f"{', '.join(DENSE_TYPES + MOE_TYPES)})")
    layers, hidden, heads, vocab = _need(
        cfg, what, "num_hidden_layers", "hidden_size", "num_attention_heads",
        "vocab_size")
    if heads == 0 or hidden == 0:
        raise ReshardError(f"{what}: hidden_size and num_attention_heads "
                           f"must be positive")
    kv_heads = _opt(cfg, what, "num_key_value_heads", heads)
    head_dim = _opt(cfg, what, "head_dim", hidden // heads)
    dtype = cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16"
    if dtype not in _DTYPES:
        raise ReshardError(f"{what}: torch_dtype {dtype!r} is not one of "
                           f"{', '.join(_DTYPES)}")
    hf_id, public, label = PUBLIC.get(name, (cfg.get("_name_or_path") or name,
                                             None, None))
    kw = dict(name=name, hf_id=hf_id, layers=layers, hidden=hidden,
              heads=heads, kv_heads=kv_heads, head_dim=head_dim,
              intermediate=_opt(cfg, what, "intermediate_size"), vocab=vocab,
              public_params=public, public_label=label, model_type=mt,
              dtype=_DTYPES[dtype],
              tie_embeddings=bool(cfg.get("tie_word_embeddings", False)))
    bias = bool(cfg.get("attention_bias", False))
    # qwen3_next.py (and Qwen3.5's) read attn_output_gate with a default
    # of true.
    gate = _flag(cfg, what, "attn_output_gate", default=mt in GDN_TYPES)
    kw["attn_output_gate"] = gate
    if mt not in MLA_TYPES and heads % kv_heads:
        raise ReshardError(f"{what}: num_attention_heads {heads} is not a "
                           f"multiple of num_key_value_heads {kv_heads}")
    if mt in DENSE_TYPES:
        _need(cfg, what, "intermediate_size")
        # Qwen2 always has q/k/v biases and no o_proj bias; LlamaMLP has
        # gate/up/down biases when mlp_bias is set.
        kw.update(qkv_bias=bias or mt == "qwen2", o_bias=bias and mt != "qwen2",
                  qk_norm=mt in ("qwen3", "qwen3_5"),
                  mlp_bias=mt == "llama" and bool(cfg.get("mlp_bias", False)))
    elif mt == "mixtral":
        # MixtralDecoderLayer: every layer sparse; experts w1 (gate), w3
        # (up), w2 (down) of intermediate_size, fused w1|w3 as vLLM's
        # FusedMoE w13; router block_sparse_moe.gate.
        experts, moe_f = _need(cfg, what, "num_local_experts",
                               "intermediate_size")
        kw.update(qkv_bias=bias, o_bias=bias, experts=experts,
                  moe_intermediate=moe_f, moe_prefix="block_sparse_moe",
                  expert_names=("w13", "w2"))
    elif mt in ("qwen3_moe", "qwen3_next", "qwen3_5_moe"):
        experts, moe_f = _need(cfg, what, "num_experts",
                               "moe_intermediate_size")
        step = _opt(cfg, what, "decoder_sparse_step", 1)
        only = cfg.get("mlp_only_layers") or []
        if not isinstance(only, list) or not all(
                isinstance(l, int) and not isinstance(l, bool) for l in only):
            raise ReshardError(f"{what}: config.json mlp_only_layers="
                               f"{only!r} is not a list of layer indices")
        only = set(only)
        # Qwen3MoeDecoderLayer: sparse unless in mlp_only_layers, every
        # decoder_sparse_step-th layer (counting from 1); Qwen3.5's MoE in
        # every layer (its config drops both keys).
        dense = () if mt == "qwen3_5_moe" else tuple(
            l for l in range(layers)
            if l in only or experts == 0 or (l + 1) % step)
        if dense:
            _need(cfg, what, "intermediate_size")
        kw.update(qkv_bias=bias, o_bias=bias, qk_norm=True, experts=experts,
                  moe_intermediate=moe_f, dense_layers=dense)
    elif mt == "gpt_oss":
        # GptOssDecoderLayer (HF modeling_gpt_oss.py, vLLM gpt_oss.py):
        # q/k/v and o_proj biases (attention_bias), a sink per head, every
        # layer MoE (num_local_experts experts of intermediate_size) with
        # a router bias and expert biases; untied embeddings.
        experts, moe_f = _need(cfg, what, "num_local_experts",
                               "intermediate_size")
        if experts == 0:
            raise ReshardError(f"{what}: gpt_oss needs num_local_experts "
                               f"> 0")
        kw.update(qkv_bias=bias, o_bias=bias, experts=experts,
                  moe_intermediate=moe_f, gpt_oss=True)
    elif mt == "glm4_moe":
        # Glm4MoeDecoderLayer (HF modeling_glm4_moe.py, vLLM glm4_moe.py):
        # q/k/v biases (attention_bias), never an o_proj bias; q_norm and
        # k_norm with use_qk_norm; MoE from first_k_dense_replace on, with
        # n_shared_experts shared experts and the sigmoid router's
        # e_score_correction_bias (always there). The MTP layer
        # (num_nextn_predict_layers) is left out, as DeepSeek-V3's.
        experts, moe_f = _need(cfg, what, "n_routed_experts",
                               "moe_intermediate_size")
        # Required: HF's Glm4MoeConfig defaults both to 1, our _opt to 0.
        first, shared = _need(cfg, what, "first_k_dense_replace",
                              "n_shared_experts")
        dense = tuple(l for l in range(layers) if l < first or experts == 0)
        if dense:
            _need(cfg, what, "intermediate_size")
        kw.update(qkv_bias=bias, qk_norm=_flag(cfg, what, "use_qk_norm"),
                  experts=experts, moe_intermediate=moe_f, dense_layers=dense,
                  shared_experts=shared,
                  expert_groups=_opt(cfg, what, "n_group"),
                  score_bias=experts > 0)
    else:
        experts, moe_f, kv_rank, nope, rope, v = _need(
            cfg, what, "n_routed_experts", "moe_intermediate_size",
            "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim",
            "v_head_dim")
        if gate:
            raise ReshardError(f"{what}: attn_output_gate is not supported "
                               f"with MLA (model_type {mt!r})")
        if bias:
            # DeepSeek's MLA would then have q_a/kv_a/o_proj biases, which
            # no released checkpoint has and vLLM does not load.
            raise ReshardError(f"{what}: attention_bias is not supported "
                               f"with MLA (model_type {mt!r})")
        first = _opt(cfg, what, "first_k_dense_replace")
        freq = _opt(cfg, what, "moe_layer_freq", 1)
        # DeepseekV3DecoderLayer: MoE from first_k_dense_replace on, every
        # moe_layer_freq-th layer.
        dense = tuple(l for l in range(layers) if l < first or l % freq)
        if dense:
            _need(cfg, what, "intermediate_size")
        kw.update(heads=heads, kv_heads=heads, head_dim=0, experts=experts,
                  moe_intermediate=moe_f, dense_layers=dense,
                  shared_experts=_opt(cfg, what, "n_shared_experts"),
                  expert_groups=_opt(cfg, what, "n_group"),
                  score_bias=cfg.get("topk_method") == "noaux_tc",
                  mla=True, q_lora_rank=_opt(cfg, what, "q_lora_rank"),
                  kv_lora_rank=kv_rank, qk_nope_head_dim=nope,
                  qk_rope_head_dim=rope, v_head_dim=v)
    if mt in GDN_TYPES:
        kw.update(_gdn_fields(cfg, what, layers, bias, mt))
    return Model(**kw)


# Qwen3.5's text models (Qwen3_5MoeForCausalLM saves this model_type).
_TEXT_TYPES = {"qwen3_5_moe_text": "qwen3_5_moe", "qwen3_5_text": "qwen3_5"}


def _text_config(cfg):
    """Qwen3.5's config.json: the text model's fields under text_config
    (model_type qwen3_5_moe_text); tie_word_embeddings and the dtype from
    the top where it gives them (Megatron-Bridge reads the top's tie; a
    text_config that says otherwise is refused). As one flat config of the
    model's type."""
    text = cfg.get("text_config")
    if not isinstance(text, dict):
        flat = cfg
    else:
        tie, inner = cfg.get("tie_word_embeddings"), \
            text.get("tie_word_embeddings")
        if tie is not None and inner not in (None, tie):
            raise ReshardError(f"config.json: tie_word_embeddings is {tie!r} "
                               f"but text_config's is {inner!r}")
        # from_hf_config reads torch_dtype before dtype: the top's wins.
        top = {"tie_word_embeddings": tie,
               "torch_dtype": cfg.get("torch_dtype") or cfg.get("dtype"),
               "model_type": cfg.get("model_type"),
               "_name_or_path": cfg.get("_name_or_path")}
        flat = dict(text, **{k: v for k, v in top.items() if v is not None})
    mt = flat.get("model_type")
    if mt in _TEXT_TYPES:
        flat = dict(flat, model_type=_TEXT_TYPES[mt])
    return flat


def _gdn_fields(cfg, what, layers, bias, mt):
    """The Gated DeltaNet hybrids' own fields (HF modeling_qwen3_next.py and
    modeling_qwen3_5_moe.py, vLLM qwen3_next.py and qwen3_5.py): which
    layers are Gated DeltaNet (layer_types, or every layer but each
    full_attention_interval-th), their sizes, and the shared expert with
    its gate (MoE only)."""
    if bias:
        raise ReshardError(f"{what}: attention_bias is not supported with "
                           f"{mt}")
    if cfg.get("layer_scale"):
        # vLLM's qwen3_5.py then adds attn/ffn_layer_scale parameters.
        raise ReshardError(f"{what}: layer_scale is not supported")
    nk, nv, dk, dv, conv = _need(
        cfg, what, "linear_num_key_heads", "linear_num_value_heads",
        "linear_key_head_dim", "linear_value_head_dim",
        "linear_conv_kernel_dim")
    if nk == 0 or nv % nk:
        raise ReshardError(f"{what}: linear_num_value_heads {nv} is not a "
                           f"multiple of linear_num_key_heads {nk}")
    types = cfg.get("layer_types")
    if types is None:
        every = _opt(cfg, what, "full_attention_interval", 4)
        types = ["linear_attention" if (l + 1) % every else "full_attention"
                 for l in range(layers)]
    kinds = ("linear_attention", "full_attention")
    if (not isinstance(types, list) or len(types) != layers
            or any(t not in kinds for t in types)):
        raise ReshardError(f"{what}: config.json layer_types must list "
                           f"{layers} of {', '.join(map(repr, kinds))}")
    # Required: HF's Qwen3NextConfig defaults differ from ours (512, 256,
    # 2), and a wrong guess would change shapes.
    _need(cfg, what, "head_dim", "num_key_value_heads")
    shared = 0
    if mt != "qwen3_5":
        shared, = _need(cfg, what, "shared_expert_intermediate_size")
    return dict(shared_experts=1 if shared else 0, shared_ffn=shared,
                shared_gate=shared > 0, gdn_flat=mt != "qwen3_next",
                linear_layers=tuple(l for l, t in enumerate(types)
                                    if t == "linear_attention"),
                lin_k_heads=nk, lin_v_heads=nv, lin_k_dim=dk, lin_v_dim=dv,
                lin_conv=conv)


def load_config(path: Union[str, os.PathLike], name: Optional[str] = None
                ) -> Model:
    """A config.json path (or its folder) -> Model; the model's name is the
    folder's name unless given."""
    if os.path.isdir(path):
        path = os.path.join(path, "config.json")
    cfg = read_json(path)
    if name is None:
        base = os.path.basename(path)
        name = (os.path.basename(os.path.dirname(os.path.abspath(path)))
                if base == "config.json" else os.path.splitext(base)[0])
    return from_hf_config(cfg, name)


def bundled_models() -> List[str]:
    """Names of the configs in examples/models/."""
    if not os.path.isdir(MODELS_DIR):
        return []
    return sorted(d for d in os.listdir(MODELS_DIR)
                  if os.path.isfile(os.path.join(MODELS_DIR, d,
                                                 "config.json")))


def get_model(spec: Union[Model, str, os.PathLike]) -> Model:
    """A Model, a bundled name, or a path to a config.json (or its folder)."""
    if isinstance(spec, Model):
        return spec
    if not isinstance(spec, (str, os.PathLike)):
        # (os.path.exists takes an int as a file descriptor.)
        raise ReshardError(f"model: give a Model, a bundled name or a "
                           f"config.json path, not {spec!r}")
    if os.path.exists(spec):
        return load_config(spec)
    if spec in bundled_models():
        return load_config(os.path.join(MODELS_DIR, spec, "config.json"))
    raise ReshardError(f"no model {spec!r}: give a config.json path or one "
                       f"of {', '.join(bundled_models()) or '(none bundled)'}")


# --------------------------------------------------------------------------
# The parameter list, each tensor with its parallel role
# --------------------------------------------------------------------------
# role: "rep" replicated, "col" split dim 0 over TP, "row" split dim 1,
#       "qkv" column-parallel q/k/v (KV-head replication aware),
#       "scol"/"srow" shared-expert col/row (replicated under vLLM's
#       sequence-parallel MoE), "glu" gpt-oss's [2, f(, h)] gate_up split
#       along f (dim 1), "rep_tp0" replicated by Megatron, held by the
#       first rank of vLLM's expert TP group only.

@dataclass
class Param:
    name: str
    shape: List[int]
    role: str
    layer: Union[int, str]   # layer index, "first" (embedding) or "last"
    blocks: Optional[List[int]] = None  # blocks of dim 0
    expert: Optional[int] = None  # routed expert index (None: not one)
    dtype: DTypeLike = "bf16"     # kept as the JSON name

    def __post_init__(self) -> None:
        self.dtype = dtype_name(self.dtype, self.name)


def model_params(m: Union[Model, str, os.PathLike],
                 layers: Optional[int] = None) -> List[Param]:
    """The model's tensors in checkpoint order (first `layers` layers); `m`
    a Model, a bundled name or a config.json path (get_model)."""
    m = get_model(m)
    layers = m.layers if layers is None else layers
    if not 0 <= layers <= m.layers:
        raise ReshardError(f"layers (--layers) must be in [0, {m.layers}] "
                           f"for {m.name}, not {layers}")
    h, dt = m.hidden, m.dtype
    # vLLM's gpt_oss.py renames the checkpoint's embed_tokens and self_attn.
    emb = "model.embedding.weight" if m.gpt_oss else \
        "model.embed_tokens.weight"
    attn = "attn" if m.gpt_oss else "self_attn"
    out = [Param(emb, [m.vocab, h], "col", "first", dtype=dt)]
    for l in range(layers):
        p = f"model.layers.{l}"

        def add(name, shape, role, **kw):
            kw.setdefault("dtype", dt)
            out.append(Param(f"{p}.{name}", shape, role, l, **kw))

        add("input_layernorm.weight", [h], "rep")
        if l in m.linear_layers:
            _gated_delta_net(m, add)
        elif m.mla:
            _mla(m, add)
        else:
            q, kv = m.heads * m.head_dim, m.kv_heads * m.head_dim
            # Logical rows [q; k; v], [q; gate; k; v] with a gate; blocks:
            # the checkpoint's q_proj (with its gates), k_proj, v_proj.
            qg = 2 * q if m.attn_output_gate else q
            add(f"{attn}.qkv_proj.weight", [qg + 2 * kv, h], "qkv",
                blocks=[qg, kv, kv])
            if m.qkv_bias:
                add(f"{attn}.qkv_proj.bias", [qg + 2 * kv], "qkv",
                    blocks=[qg, kv, kv])
            if m.qk_norm:
                add(f"{attn}.q_norm.weight", [m.head_dim], "rep")
                add(f"{attn}.k_norm.weight", [m.head_dim], "rep")
            add(f"{attn}.o_proj.weight", [h, q], "row")
            if m.o_bias:
                add(f"{attn}.o_proj.bias", [h], "rep")
            if m.gpt_oss:
                # One sink logit per head, split with the heads.
                add("attn.sinks", [m.heads], "col")
        add("post_attention_layernorm.weight", [h], "rep")
        if not m.is_moe(l):
            f = m.intermediate
            add("mlp.gate_up_proj.weight", [2 * f, h], "col", blocks=[f, f])
            if m.mlp_bias:
                add("mlp.gate_up_proj.bias", [2 * f], "col", blocks=[f, f])
            add("mlp.down_proj.weight", [h, f], "row")
            if m.mlp_bias:
                add("mlp.down_proj.bias", [h], "rep")
            continue
        moe = m.moe_prefix
        if m.gpt_oss:
            _gpt_oss_moe(m, add)
            continue
        add(f"{moe}.gate.weight", [m.experts, h], "rep")
        if m.score_bias:
            # Megatron keeps router.expert_bias in fp32; vLLM too.
            add("mlp.gate.e_score_correction_bias", [m.experts], "rep",
                dtype="fp32")
        if m.shared_experts:
            fs = m.shared_size()
            col, row = (("scol", "srow") if m.spmoe_replicates_shared()
                        else ("col", "row"))
            se = "shared_expert" if m.shared_gate else "shared_experts"
            add(f"mlp.{se}.gate_up_proj.weight", [2 * fs, h], col,
                blocks=[fs, fs])
            add(f"mlp.{se}.down_proj.weight", [h, fs], row)
            if m.shared_gate:
                add("mlp.shared_expert_gate.weight", [1, h], "rep")
        f = m.moe_intermediate
        up, down = m.expert_names
        for e in range(m.experts):
            add(f"{moe}.experts.{e}.{up}.weight", [2 * f, h], "col",
                blocks=[f, f], expert=e)
            add(f"{moe}.experts.{e}.{down}.weight", [h, f], "row", expert=e)
    out.append(Param("model.norm.weight", [h], "rep", "last", dtype=dt))
    if not m.tie_embeddings:
        out.append(Param("lm_head.weight", [m.vocab, h], "col", "last",
                         dtype=dt))
    return out


def _gpt_oss_moe(m, add):
    """gpt-oss's MoE: the router with its bias, and per expert its gate_up
    as [2, f, h] (gate or up, row, hidden; the bias [2, f]), role "glu":
    split over TP along f, so that a rank holds [gate_r; up_r] row-major
    (Megatron-Core) or, stored with dims f and gate/up swapped, vLLM's
    interleaved rows (row 2i gate i, 2i + 1 up i). down_proj's bias is
    held whole; vLLM keeps it on the first rank of the experts' TP group
    (role "rep_tp0"), the others hold zeros."""
    h, f = m.hidden, m.moe_intermediate
    add("mlp.router.weight", [m.experts, h], "rep")
    add("mlp.router.bias", [m.experts], "rep")
    for e in range(m.experts):
        add(f"mlp.experts.{e}.gate_up_proj.weight", [2, f, h], "glu",
            expert=e)
        add(f"mlp.experts.{e}.gate_up_proj.bias", [2, f], "glu", expert=e)
        add(f"mlp.experts.{e}.down_proj.weight", [h, f], "row", expert=e)
        add(f"mlp.experts.{e}.down_proj.bias", [h], "rep_tp0", expert=e)


def _gated_delta_net(m, add):
    """A Gated DeltaNet layer in the checkpoint's order of rows: Qwen3-Next's
    in_proj_qkvz grouped per key head g ([q_g; k_g; v_g; z_g], the group's
    value heads in v_g and z_g) and in_proj_ba likewise ([b_g; a_g]);
    Qwen3.5's [in_proj_qkv; in_proj_z] and [in_proj_b; in_proj_a] as vLLM
    fuses them, flat (blocks [q, k, v, z] and [b, a]); conv1d's channels
    [q; k; v] of all heads (blocks)."""
    h, nv = m.hidden, m.lin_v_heads
    kd, vd = m.lin_k_heads * m.lin_k_dim, nv * m.lin_v_dim
    if m.gdn_flat:
        add("linear_attn.in_proj_qkvz.weight", [2 * kd + 2 * vd, h], "col",
            blocks=[kd, kd, vd, vd])
        add("linear_attn.in_proj_ba.weight", [2 * nv, h], "col",
            blocks=[nv, nv])
    else:
        add("linear_attn.in_proj_qkvz.weight", [2 * kd + 2 * vd, h],
            "gdn_qkvz")
        add("linear_attn.in_proj_ba.weight", [2 * nv, h], "gdn_ba")
    add("linear_attn.conv1d.weight", [2 * kd + vd, 1, m.lin_conv], "col",
        blocks=[kd, kd, vd])
    add("linear_attn.dt_bias", [nv], "col")
    add("linear_attn.A_log", [nv], "col")
    add("linear_attn.norm.weight", [m.lin_v_dim], "rep")
    add("linear_attn.out_proj.weight", [h, vd], "row")


def _mla(m, add):
    h = m.hidden
    q_head = m.qk_nope_head_dim + m.qk_rope_head_dim
    kv_a = m.kv_lora_rank + m.qk_rope_head_dim
    if m.q_lora_rank:
        add("self_attn.fused_qkv_a_proj.weight", [m.q_lora_rank + kv_a, h],
            "rep", blocks=[m.q_lora_rank, kv_a])
        add("self_attn.q_a_layernorm.weight", [m.q_lora_rank], "rep")
        add("self_attn.q_b_proj.weight", [m.heads * q_head, m.q_lora_rank],
            "col")
    else:
        add("self_attn.q_proj.weight", [m.heads * q_head, h], "col")
        add("self_attn.kv_a_proj_with_mqa.weight", [kv_a, h], "rep")
    add("self_attn.kv_a_layernorm.weight", [m.kv_lora_rank], "rep")
    add("self_attn.kv_b_proj.weight",
        [m.heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank], "col")
    add("self_attn.o_proj.weight", [h, m.heads * m.v_head_dim], "row")


def count_params(params: List[Param]) -> int:
    return sum(math.prod(p.shape) for p in params)


def _lcm(*xs):
    out = 1
    for x in xs:
        out = out * x // math.gcd(out, x)
    return out


def scale_model(m, factor, tps):
    """The model with every hidden-like dimension divided by factor; the
    vocab rounded up to a multiple of lcm(64, *tps)."""
    if factor == 1:
        return m
    changes = {}
    for f in SCALED_DIMS:
        v = getattr(m, f)
        if v % factor:
            raise ReshardError(f"--scale-down {factor}: {m.name} {f}={v} is "
                               f"not divisible by {factor}")
        changes[f] = v // factor
    q = _lcm(64, *tps)
    changes["vocab"] = -(-max(1, m.vocab // factor) // q) * q
    return replace(m, **changes)
