"""Megatron-Core training layouts: rank order, pipeline split, TP/EP roles.

The conventions and the Megatron code they mirror are in docs/Python.md
("Trainer layout: Megatron-Core").
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .errors import ReshardError
from .mesh import DeviceMesh, _is_int, init_device_mesh


def strip_framework(text: str, framework: str, what: str) -> str:
    """'megatron:tp=8,pp=2' -> 'tp=8,pp=2': the CLI's FRAMEWORK: prefix is
    optional in Python, and must name `framework` when given."""
    if not isinstance(text, str):
        raise ReshardError(f"{what}: give a spec string such as "
                           f"'{framework}:tp=8,...', not {text!r}")
    fw, sep, rest = text.partition(":")
    if not sep or "=" in fw or "," in fw:  # stages=7:8:8 has colons too
        return text
    if fw.strip().lower() != framework:
        raise ReshardError(f"{what}: framework {fw.strip()!r} is not "
                           f"supported here (use {framework}:...)")
    return rest


_DIGITS = re.compile(r"[0-9]{1,18}")     # plain ASCII decimal integers
MAX_RANKS = 1 << 20                      # a world larger is a typo


def check_world(world: int, who: str) -> None:
    if world > MAX_RANKS:
        raise ReshardError(f"{who}: {world:,} ranks: more than the "
                           f"{MAX_RANKS:,} a plan supports")


def parse_spec(text: str, allowed: Tuple[str, ...], what: str,
               words: Tuple[str, ...] = ()) -> Dict:
    """'k=v,k=v' -> {k: int}; spmoe=auto -> None; keys in words keep their
    value as a string. An item without '=' after layout= continues it
    (Megatron's pipeline layouts use commas as cosmetic separators)."""
    out = {}
    key = None
    for item in filter(None, (s.strip() for s in text.split(","))):
        if key == "layout" and "=" not in item:
            out[key] += "," + item
            continue
        key, sep, val = item.partition("=")
        key = key.strip()
        if not sep or key not in allowed:
            raise ReshardError(f"{what}: bad item {item!r} (keys: "
                               f"{', '.join(allowed)})")
        if key in out:
            raise ReshardError(f"{what}: {key} given twice")
        val = val.strip()
        if key in words:
            out[key] = val
            continue
        if key == "stages":
            counts = [v.strip() for v in val.split(":")]
            if not all(_DIGITS.fullmatch(v) for v in counts):
                raise ReshardError(f"{what}: stages={val!r}: give layer "
                                   f"counts per stage, e.g. 7:8:8:6")
            out[key] = tuple(int(v) for v in counts)
            continue
        if key == "spmoe" and val == "auto":
            out[key] = None
            continue
        if not _DIGITS.fullmatch(val.lstrip("-")):
            raise ReshardError(f"{what}: {key}={val!r} is not an integer")
        out[key] = int(val)
        zero_ok = key in ("ep", "spmoe", "first", "last", "redundant")
        if out[key] < 0 or (out[key] == 0 and not zero_ok):
            raise ReshardError(f"{what}: {key} must be "
                               f"{'>= 0' if zero_ok else 'positive'}")
    return out


def check_sizes(spec, keys: Tuple[str, ...], who: str) -> None:
    """Parallel sizes of a Train or Infer built in Python are positive
    integers, as the spec strings' are (kept as Python ints)."""
    for key in keys:
        v = getattr(spec, key)
        if not _is_int(v) or v < 1:
            raise ReshardError(f"{who}: {key}={v!r} must be a positive "
                               f"integer")
        object.__setattr__(spec, key, int(v))


def check_stages(spec, who: str) -> None:
    """`stages` of a Train or Infer, if given: layer counts >= 0 from any
    iterable, kept as a tuple of ints."""
    if spec.stages is None:
        return
    try:
        vals = (None if isinstance(spec.stages, (str, bytes, dict, set,
                                                 frozenset))
                else tuple(spec.stages))
    except TypeError:
        vals = None
    if vals is None or not all(_is_int(v) and v >= 0 for v in vals):
        raise ReshardError(f"{who}: stages={spec.stages!r} must be layer "
                           f"counts >= 0, one per stage")
    object.__setattr__(spec, "stages", tuple(int(v) for v in vals))


@dataclass(frozen=True)
class Train:
    tp: int = 1
    dp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    etp: int = 1
    first: Optional[int] = None   # layers on the first stage (with last)
    last: Optional[int] = None
    stages: Optional[Tuple[int, ...]] = None  # layers of every stage
    # --virtual-pipeline-model-parallel-size: model chunks per stage,
    # interleaved (pipeline_split / layer_stages).
    vpp: int = 1
    # --make-vocab-size-divisible-by: the embedding and output layer hold
    # the vocab padded to a multiple of vocab_pad*tp (Megatron-LM's
    # default is 128; Megatron-Bridge pads only with should_pad_vocab).
    # None: unpadded, as Megatron-Bridge builds HF models (vocab_rows).
    vocab_pad: Optional[int] = None
    # --pipeline-model-parallel-layout: what each of the pp*vpp virtual
    # stages holds (PipelineLayout; a string in Megatron's syntax or its
    # list of lists). Sets vpp; excludes first/last/stages.
    layout: Any = None
    # The embedding's rows outright (Megatron-LM's args.padded_vocab_size),
    # where Megatron padded another size than config.json's vocab_size
    # (the tokenizer's): at least the vocab, a multiple of tp.
    padded_vocab: Optional[int] = None

    def __post_init__(self) -> None:
        check_sizes(self, ("tp", "dp", "pp", "cp", "ep", "etp", "vpp"),
                    "Megatron")
        for key, low in (("first", 0), ("last", 0), ("vocab_pad", 1),
                         ("padded_vocab", 1)):
            v = getattr(self, key)
            want = "an integer >= 0" if low == 0 else "a positive integer"
            if v is not None and (not _is_int(v) or v < low):
                raise ReshardError(f"Megatron: {key}={v!r} must be {want} "
                                   f"or None")
            if v is not None:
                object.__setattr__(self, key, int(v))
        if (self.first is None) != (self.last is None):
            raise ReshardError("Megatron: give first= and last= together")
        check_stages(self, "Megatron")
        check_world(self.world, "Megatron")
        if self.layout is not None:
            self._set_layout()
        if self.padded_vocab is not None:
            if self.vocab_pad is not None:
                raise ReshardError("Megatron: give vocab_pad= or "
                                   "padded_vocab=, not both")
            if self.padded_vocab % self.tp:
                raise ReshardError(f"Megatron: padded_vocab="
                                   f"{self.padded_vocab} % tp {self.tp}")
        if self.stages is not None:
            if self.first is not None:
                raise ReshardError("Megatron: give stages= or first=/last=")
            if len(self.stages) != self.pp:
                raise ReshardError(f"Megatron: stages= lists "
                                   f"{len(self.stages)} stages for "
                                   f"pp={self.pp}")

    def _set_layout(self) -> None:
        if self.first is not None or self.stages is not None:
            raise ReshardError("Megatron: layout= sets every stage's layers;"
                               " drop first=/last= and stages= (Megatron "
                               "refuses them together)")
        lay = PipelineLayout.parse(self.layout, self.pp)
        if lay.vpp > 1 and self.pp < 2:
            raise ReshardError(
                f"Megatron: layout={lay} has {lay.vpp} stages for pp=1: "
                f"virtual pipeline stages need pp >= 2 (pp= left out?)")
        if self.vpp not in (1, lay.vpp):
            raise ReshardError(
                f"Megatron: vpp={self.vpp}, but layout= has "
                f"{len(lay.stages)} stages, vpp={lay.vpp} for pp={self.pp}")
        object.__setattr__(self, "layout", lay)
        object.__setattr__(self, "vpp", lay.vpp)

    @property
    def stage_size(self):
        return self.tp * self.cp * self.dp

    @property
    def world(self):
        return self.stage_size * self.pp

    @property
    def edp(self):
        return self.stage_size // (self.ep * self.etp)


TRAIN_KEYS = ("tp", "pp", "dp", "cp", "ep", "etp", "vpp", "first", "last",
              "stages", "layout", "vocab_pad", "padded_vocab")


def parse_train(text: str, what: str = "train") -> Train:
    """'[megatron:]tp=8,pp=2,dp=4[,cp=][,ep=][,etp=][,vpp=][,first=,last=|,
    stages=a:b:..|,layout=Et*3|(tt|)*29,m|L][,vocab_pad=|,padded_vocab=]'
    -> Train."""
    text = strip_framework(text, "megatron", what)
    # every size defaults to 1
    d = parse_spec(text, TRAIN_KEYS, what, words=("layout",))
    try:
        return Train(**d)
    except ReshardError as e:       # Train's own checks, named as the spec
        raise ReshardError(str(e).replace("Megatron:", f"{what}:", 1)) \
            from None


_LAYER_CHARS = {"embedding": "E", "decoder": "t", "mtp": "m", "loss": "L"}


@dataclass(frozen=True)
class PipelineLayout:
    """Megatron-Core's --pipeline-model-parallel-layout: virtual stage i
    (i = v*pp + p: pipeline rank p's model chunk v) holds `stages[i]`, a
    string of E (embedding), t (decoder layer), m (MTP layer) and L (loss:
    the output layer). Decoder layers are numbered in stage order."""
    stages: Tuple[str, ...]
    pp: int
    text: str = field(default="", compare=False)    # as given, for messages

    @property
    def vpp(self) -> int:
        return len(self.stages) // self.pp

    def __str__(self) -> str:
        return self.text or "|".join(self.stages)

    @staticmethod
    def parse(spec: Any, pp: int) -> "PipelineLayout":
        """From Megatron's string ("Et*3|(tt|)*29,m|L": '|' ends a stage,
        '(..)*n' and 'x*n' repeat, commas are cosmetic) or its list of
        lists of layer names ("embedding", "decoder", "mtp", "loss"), with
        the checks of Megatron's PipelineParallelLayerLayout."""
        text = spec if isinstance(spec, str) else ""
        if isinstance(spec, str) and spec.lstrip().startswith("["):
            spec = _literal_list(spec)      # Bridge's list, as text
        if isinstance(spec, PipelineLayout):
            text, spec = spec.text, list(spec.stages)
        if isinstance(spec, str) and not spec.strip():
            raise ReshardError("Megatron: layout= is empty (give Megatron's "
                               "--pipeline-model-parallel-layout)")
        if isinstance(spec, str):
            stages = _unroll(spec).split("|")
        elif isinstance(spec, (list, tuple)) and all(
                isinstance(r, (list, tuple)) for r in spec):
            stages = ["".join(_layer_char(x) for x in r) for r in spec]
        elif isinstance(spec, (list, tuple)) and all(
                isinstance(r, str) and set(r) <= set("EtmL") for r in spec):
            stages = list(spec)           # our own stage strings
        else:
            raise ReshardError(f"Megatron: layout={spec!r} must be a string "
                               f"such as 'Et*3|(tt|)*29,m|L' or a list of "
                               f"lists of layer names")
        if len(stages) % pp:
            raise ReshardError(f"Megatron: layout={text or spec!r} has "
                               f"{len(stages)} stages, not a multiple of "
                               f"pp={pp}")
        lay = PipelineLayout(tuple(stages), pp, text)
        lay._check()
        return lay

    def _check(self) -> None:
        flat = "".join(self.stages)
        where = f"Megatron: layout={self}:"
        if flat.count("E") != 1 or flat.count("L") != 1:
            raise ReshardError(f"{where} give E (the embedding) and L (the "
                               f"loss) once each")
        if flat[0] != "E" or flat[-1] != "L":
            raise ReshardError(f"{where} E must come first and L last (in "
                               f"stage order)")
        if "m" in flat and "t" in flat[flat.index("m"):]:
            raise ReshardError(f"{where} decoder layers (t) must come "
                               f"before MTP layers (m)")
        with_mtp = [i for i, s in enumerate(self.stages) if "m" in s]
        if len(with_mtp) > 1:
            raise ReshardError(f"{where} all MTP layers (m) must be in one "
                               f"stage")
        if with_mtp and with_mtp[0] // self.pp != self.vpp - 1:
            raise ReshardError(f"{where} MTP layers (m) must be in the last "
                               f"model chunk of their pipeline rank")

    def chunk_layers(self) -> List[List[List[int]]]:
        """[pipeline rank][model chunk] -> the decoder layers it holds."""
        out = [[[] for _ in range(self.vpp)] for _ in range(self.pp)]
        layer = 0
        for i, s in enumerate(self.stages):
            for _ in range(s.count("t")):
                out[i % self.pp][i // self.pp].append(layer)
                layer += 1
        return out

    def final_norm_rank(self) -> int:
        """The pipeline rank that holds the final norm: the loss's, but
        with MTP layers the last decoder layer's (Megatron-Core's
        TransformerBlock.has_final_layernorm_in_this_stage)."""
        if "m" not in "".join(self.stages):
            return self.pp - 1
        last = max((i for i, s in enumerate(self.stages) if "t" in s),
                   default=len(self.stages) - 1)
        return last % self.pp


def _literal_list(text: str) -> Any:
    """A Python or JSON list of lists of layer names, from text."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ReshardError(f"Megatron: layout={text[:60]!r}: not a list of "
                           f"lists of layer names") from None


def _layer_char(x: Any) -> str:
    name = x.strip().lower() if isinstance(x, str) else \
        str(getattr(x, "name", x)).lower()      # a LayerType
    if name not in _LAYER_CHARS:
        raise ReshardError(f"Megatron: layout= layer {x!r} is not one of "
                           f"{', '.join(_LAYER_CHARS)}")
    return _LAYER_CHARS[name]


_MAX_LAYOUT = 1 << 20    # characters unrolled: far above any real model


def _unroll(text: str) -> str:
    """Megatron's layout string without its repeats and commas."""
    def repeat(m):
        if len(m[2]) > 7 or len(m[1]) * int(m[2]) > _MAX_LAYOUT:
            raise ReshardError(f"Megatron: layout={text!r}: repeat "
                               f"{m[0]!r} is too long")
        return m[1] * int(m[2])
    s = text.replace(",", "")
    s = re.sub(r"\(([^()]+)\)\*([0-9]+)", repeat, s)
    s = re.sub(r"(.)\*([0-9]+)", repeat, s)
    if len(s) > _MAX_LAYOUT:
        raise ReshardError(f"Megatron: layout={text[:40]!r}...: more than "
                           f"{_MAX_LAYOUT:,} layers and separators")
    bad = sorted(set(s) - set("EtmL|"))
    if bad:
        raise ReshardError(
            f"Megatron: layout={text!r}: {''.join(bad)!r} is not a layer "
            f"(E, t, m, L), '|', or a repeat '(..)*n' / 'x*n' (no nesting)")
    return s


def layer_stages(layers, t):
    """The pipeline stage of each layer. With vpp model chunks a stage,
    stage p's chunks hold c_p = (its layers) / vpp layers each and chunk v
    of stage p starts at layer v*(layers/vpp) + c_0 + ... + c_(p-1)
    (Megatron-Core's get_transformer_layer_offset, even and first/last
    splits alike); with layout=, its stages in order."""
    counts = pipeline_split(layers, t)
    if t.layout is not None:
        return [i % t.pp for i, s in enumerate(t.layout.stages)
                for _ in range(s.count("t"))]
    if t.vpp == 1:
        return [s for s, n in enumerate(counts) for _ in range(n)]
    return [s for _ in range(t.vpp) for s, n in enumerate(counts)
            for _ in range(n // t.vpp)]


def _check_vpp(layers, t, counts):
    if t.stages is not None:
        raise ReshardError("vpp= with stages= is not supported: give "
                           "Megatron's per-virtual-stage layout= "
                           "(--pipeline-model-parallel-layout)")
    if t.pp < 2:
        raise ReshardError(f"vpp={t.vpp} needs pp >= 2 (virtual pipeline "
                           f"stages interleave over stages)")
    if t.first is None and layers % (t.pp * t.vpp):
        raise ReshardError(f"{layers} layers do not split evenly into "
                           f"pp*vpp = {t.pp * t.vpp} model chunks")
    bad = [s for s, n in enumerate(counts) if n % t.vpp]
    if bad:
        raise ReshardError(f"stage {bad[0]}'s {counts[bad[0]]} layers do not "
                           f"split into vpp={t.vpp} model chunks")
    empty = [s for s, n in enumerate(counts) if n == 0]
    if empty:
        # Megatron-Core refuses empty stages with virtual pipelining.
        raise ReshardError(f"stage {empty[0]} holds no layers: with vpp every "
                           f"model chunk needs at least one")


def pipeline_split(layers, t):
    """Layer count of each of the t.pp stages (docs/Python.md)."""
    if t.layout is not None:
        held = [sum(map(len, c)) for c in t.layout.chunk_layers()]
        if sum(held) != layers:
            raise ReshardError(f"layout={t.layout} holds {sum(held)} "
                               f"decoder layers (t), not {layers}")
        return held
    counts = _pipeline_split(layers, t)
    if t.vpp > 1:
        _check_vpp(layers, t, counts)
    return counts


def _pipeline_split(layers, t):
    pp = t.pp
    if t.stages is not None:
        if sum(t.stages) != layers:
            raise ReshardError(f"stages={':'.join(map(str, t.stages))} "
                               f"holds {sum(t.stages)} layers, not {layers}")
        return list(t.stages)
    if t.first is not None:
        mid = layers - t.first - t.last
        if pp == 1:
            ok = t.first == t.last == layers
            counts = [layers]
        elif pp == 2:
            ok = mid == 0
            counts = [t.first, t.last]
        else:
            ok = mid >= 0 and mid % (pp - 2) == 0
            counts = [t.first] + [mid // (pp - 2) if ok else 0] * (pp - 2) \
                + [t.last]
        if not ok and pp <= 2:
            raise ReshardError(f"first={t.first}, last={t.last}: with "
                               f"pp={pp} they must cover all {layers} layers")
        if mid < 0:
            raise ReshardError(f"first={t.first}, last={t.last}: more than "
                               f"the {layers} layers (with --layers, drop "
                               f"first= and last=)")
        if not ok:
            raise ReshardError(
                f"first={t.first}, last={t.last}: the other {mid} of "
                f"{layers} layers do not split evenly over {pp - 2} middle "
                f"stages")
        return counts
    base, rem = divmod(layers, pp)
    counts = [base] * pp
    # Extra layers go to the middle stages first: the first and last
    # stages also hold the embedding and the head.
    order = list(range(1, pp - 1)) + [0, pp - 1] if pp > 2 else list(range(pp))
    for s in order[:rem]:
        counts[s] += 1
    return counts


def validate(m, t):
    """The divisibility rules Megatron-Core enforces; a list of errors."""
    err = []
    if m.heads % t.tp:
        err.append(f"Megatron: num_attention_heads {m.heads} % tp {t.tp}")
    # TransformerConfig: query groups a multiple or a divisor of tp; with
    # fewer groups than tp a group's rows are split over ranks.
    if not m.mla and m.kv_heads % t.tp and t.tp % m.kv_heads:
        err.append(f"Megatron: num_query_groups {m.kv_heads} and tp {t.tp}: "
                   f"neither divides the other")
    elif not m.mla and qkv_rows(m) % t.tp:
        err.append(f"Megatron: linear_qkv rows {qkv_rows(m)} % tp {t.tp}")
    if m.dense_layers or not m.experts:
        if m.intermediate % t.tp:
            err.append(f"Megatron: ffn_hidden_size {m.intermediate} % tp")
    if t.vocab_pad is None and t.padded_vocab is None and m.vocab % t.tp:
        err.append(f"Megatron: vocab {m.vocab} % tp {t.tp} (unpadded vocab; "
                   f"Megatron-LM pads it: give vocab_pad=, its "
                   f"make_vocab_size_divisible_by)")
    if t.padded_vocab is not None and t.padded_vocab < m.vocab:
        err.append(f"Megatron: padded_vocab={t.padded_vocab} holds fewer "
                   f"rows than the vocab {m.vocab}: the rows past it would "
                   f"have no source")
    if m.experts:
        if m.experts % t.ep:
            err.append(f"Megatron: num_moe_experts {m.experts} % ep {t.ep}")
        if m.moe_intermediate % t.etp:
            err.append(f"Megatron: moe_ffn_hidden_size % etp {t.etp}")
        if t.stage_size % (t.ep * t.etp):
            err.append(f"Megatron: tp*cp*dp = {t.stage_size} is not a "
                       f"multiple of ep*etp = {t.ep * t.etp}")
        if m.shared_experts and m.shared_size() % t.tp:
            err.append("Megatron: shared expert intermediate % tp")
        # TransformerConfig: "Bias in Moe is only supported when ETP==1".
        if m.gpt_oss and t.etp > 1:
            err.append(f"Megatron: {m.name}'s experts have biases, which "
                       f"Megatron-Core supports only with etp=1 (got "
                       f"etp={t.etp})")
    elif t.ep != 1 or t.etp != 1:
        err.append(f"{m.name} has no experts: ep and etp must be 1")
    # GatedDeltaNet (TransformerConfig): key and value heads split over
    # tp; no context parallelism.
    if m.linear_layers and (m.lin_k_heads % t.tp or m.lin_v_heads % t.tp):
        err.append(f"Megatron: linear_num_key_heads {m.lin_k_heads} and "
                   f"linear_num_value_heads {m.lin_v_heads} % tp {t.tp}")
    if m.linear_layers and t.cp > 1:
        err.append(f"Megatron: Gated DeltaNet layers do not take context "
                   f"parallelism (cp={t.cp})")
    return err


def vocab_rows(m, t):
    """Rows of the embedding and the output layer on each TP rank: the
    vocab padded to a multiple of vocab_pad*tp (_vocab_size_with_padding
    in megatron/training/tokenizer, Bridge's calculate_padded_vocab_size),
    rank r holding padded rows r*n to r*n + n - 1; padded_vocab / tp when
    given; unpadded, vocab / tp."""
    if t.padded_vocab is not None:
        return t.padded_vocab // t.tp
    if t.vocab_pad is None:
        return m.vocab // t.tp
    q = t.vocab_pad * t.tp
    return -(-m.vocab // q) * q // t.tp


def qkv_rows(m):
    """Rows of the logical [q; k; v] ([q; gate; k; v] gated)."""
    return (m.heads * (1 + m.attn_output_gate) + 2 * m.kv_heads) * m.head_dim


def qkv_order(m):
    """linear_qkv's storage order of the logical [q; k; v] rows: for each
    query group its queries, key and value; gated ([q; gate; k; v]) its
    queries, gates, key and value (docs/Python.md)."""
    hd, nq, nkv = m.head_dim, m.heads, m.kv_heads
    hpg = nq // nkv
    q = nq * hd
    k = q * (1 + m.attn_output_gate)       # first key row
    runs = []
    for g in range(nkv):
        runs.append([g * hpg * hd, hpg * hd])
        if m.attn_output_gate:
            runs.append([q + g * hpg * hd, hpg * hd])
        runs += [[k + g * hd, hd], [k + nkv * hd + g * hd, hd]]
    return runs


def gdn_order(m, tp, ba):
    """GatedDeltaNet's in_proj rows of in_proj_qkvz (or, with ba,
    in_proj_ba) on Megatron: each TP rank holds its key groups' queries,
    then keys, values and z ([b; a] for ba), where the checkpoint groups
    them per key head (megatron/core/ssm/gated_delta_net.py; Megatron-
    Bridge's merge_gdn_linear_weights)."""
    r = m.lin_v_heads // m.lin_k_heads      # value heads a key head
    parts = ([r, r] if ba else
             [m.lin_k_dim, m.lin_k_dim, r * m.lin_v_dim, r * m.lin_v_dim])
    width, per = sum(parts), m.lin_k_heads // tp
    runs = []
    for rank in range(tp):
        for j, n in enumerate(parts):
            runs += [[g * width + sum(parts[:j]), n]
                     for g in range(rank * per, (rank + 1) * per)]
    return runs


def tp_dims(ndim, role, axes):
    """Per-dim axis lists for a tensor of a role: column-parallel roles
    split dim 0, row-parallel ones dim 1 (and gpt-oss's [2, f, h] gate_up
    along f), the rest replicate."""
    dims = [[] for _ in range(ndim)]
    if role in ("col", "qkv", "scol", "gdn_qkvz", "gdn_ba"):
        dims[0] = list(axes)
    elif role in ("row", "srow", "glu"):
        dims[1] = list(axes)
    return dims


class PresetSide:
    """What a preset's side shares: the pipeline stage of each layer (the
    embedding on the first, the final norm and head on the last) and its
    meshes, each made once by name."""

    def dim_order(self, p):
        """The order a Param's buffers store their dims in (None: row-
        major); Megatron-Core stores every tensor row-major."""
        return None

    def __init__(self, pp, stage_of):
        self.pp = pp
        self.stage_of = stage_of
        self.meshes = {}

    def stage(self, layer):
        if layer == "first":
            return 0
        if layer == "last":
            return self.pp - 1
        return self.stage_of[layer]

    def _mesh(self, name, make):
        if name not in self.meshes:
            self.meshes[name] = make(name)
        return self.meshes[name]


FINAL_NORM = "model.norm.weight"


class MegatronSide(PresetSide):
    """Places each parameter on its pipeline stage's (expert) mesh."""

    def __init__(self, t, layers, first_rank=0):
        super().__init__(t.pp, layer_stages(layers, t))
        self.t = t
        self.first_rank = first_rank
        self.norm_stage = t.pp - 1 if t.layout is None else \
            t.layout.final_norm_rank()

    def dense_mesh(self, s):
        t = self.t
        base = self.first_rank + s * t.stage_size
        # order tp-cp-ep-dp-pp: row-major over [dp, cp, tp].
        if t.cp == 1:
            shape, names = (t.dp, t.tp), ("dp", "tp")
        else:
            shape, names = (t.dp, t.cp, t.tp), ("dp", "cp", "tp")
        return self._mesh(f"train_pp{s}", lambda name: init_device_mesh(
            shape, names, first_rank=base, name=name))

    def expert_mesh(self, s, g):
        t = self.t
        base = self.first_rank + s * t.stage_size
        # Expert rank: etp fastest, then ep, then edp.
        return self._mesh(f"train_pp{s}_ep{g}", lambda name: DeviceMesh(
            [[base + (d * t.ep + g) * t.etp + x for x in range(t.etp)]
             for d in range(t.edp)], ("edp", "etp"), name=name))

    def tp_rank_mesh(self, s, r):
        """The dp (and cp) replicas of TP rank r of stage s."""
        t = self.t
        base = self.first_rank + s * t.stage_size + r
        return self._mesh(f"train_pp{s}_tp{r}", lambda name: DeviceMesh(
            [[base + (d * t.cp + c) * t.tp for c in range(t.cp)]
             for d in range(t.dp)] if t.cp > 1 else
            [base + d * t.tp for d in range(t.dp)],
            ("dp", "cp") if t.cp > 1 else ("dp",), name=name))

    def fused(self, p, m):
        """(blocks, order) of a Param: linear_qkv's order; the others'
        blocks (linear_fc1 holds [gate_r; up_r] per rank)."""
        if p.role == "qkv":
            return None, {0: qkv_order(m)}
        if p.role in ("gdn_qkvz", "gdn_ba"):
            return None, {0: gdn_order(m, self.t.tp, p.role == "gdn_ba")}
        return ({0: p.blocks} if p.blocks else None), None

    def place(self, p, m):
        """(mesh, dims) of a Param."""
        s = self.norm_stage if p.name == FINAL_NORM else self.stage(p.layer)
        if p.expert is not None:
            g = p.expert // (m.experts // self.t.ep)
            return self.expert_mesh(s, g), tp_dims(len(p.shape), p.role,
                                                   ["etp"])
        return self.dense_mesh(s), tp_dims(len(p.shape), p.role, ["tp"])
