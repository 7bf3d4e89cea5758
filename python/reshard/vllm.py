"""vLLM inference layouts: engines, TP, expert parallel, KV-head replicas.

The conventions and the vLLM code they mirror are in docs/Python.md
("Inference layout: vLLM").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .errors import ReshardError
from .layout import DeviceMesh, init_device_mesh
from .megatron import parse_spec, tp_dims


@dataclass(frozen=True)
class Infer:
    tp: int = 1
    dp: int = 1              # engines (replicas), or one DP deployment
    ep: bool = False         # --enable-expert-parallel
    spmoe: Optional[bool] = None  # None: vLLM's rule (ep, tp > 1, dp > 1)

    @property
    def world(self):
        return self.tp * self.dp

    @property
    def seq_parallel_moe(self):
        if self.spmoe is None:
            return self.ep and self.tp > 1 and self.dp > 1
        return self.spmoe


INFER_KEYS = ("tp", "dp", "engines", "ep", "spmoe")


def parse_infer(text: str, what: str = "--infer") -> Infer:
    """'tp=8,dp=4[,ep=0|1|tp*dp][,spmoe=auto|0|1]' -> Infer; engines= is
    a synonym of dp=."""
    d = parse_spec(text, INFER_KEYS, what)
    if "engines" in d:
        if "dp" in d:
            raise ReshardError(f"{what}: give dp= or engines=, not both")
        d["dp"] = d.pop("engines")
    tp, dp = d.get("tp", 1), d.get("dp", 1)  # sizes default to 1
    ep = d.get("ep", 0)
    if ep not in (0, 1) and ep != tp * dp:
        raise ReshardError(f"{what}: ep={ep}: vLLM's expert parallel group "
                           f"is all tp*dp = {tp * dp} ranks; give ep=1 "
                           f"(enable) or ep=0")
    spmoe = d.get("spmoe")
    if spmoe not in (None, 0, 1):
        raise ReshardError(f"{what}: spmoe must be auto, 0 or 1")
    return Infer(tp=tp, dp=dp, ep=bool(ep),
                 spmoe=None if spmoe is None else bool(spmoe))


def kv_split(m, i):
    """Whether vLLM replicates KV heads (tp > num_kv_heads)."""
    return not m.mla and i.tp > m.kv_heads


def validate(m, i):
    """The divisibility rules vLLM enforces; a list of errors."""
    err = []
    if m.heads % i.tp:
        err.append(f"vLLM: num_heads {m.heads} % tp {i.tp}")
    if not m.mla and m.kv_heads % i.tp and i.tp % m.kv_heads:
        err.append(f"vLLM: tp {i.tp} and num_kv_heads {m.kv_heads}: neither "
                   f"divides the other")
    if (m.dense_layers or not m.experts) and m.intermediate % i.tp:
        err.append(f"vLLM: intermediate_size {m.intermediate} % tp {i.tp}")
    if i.tp > 1 and (m.vocab % 64 or m.vocab % i.tp):
        err.append(f"vLLM: vocab {m.vocab} must be a multiple of 64 and of tp "
                   f"(VocabParallelEmbedding padding)")
    if m.experts:
        if not i.ep and m.moe_intermediate % i.tp:
            err.append(f"vLLM: moe_intermediate_size % tp {i.tp} (no EP)")
        if i.ep and m.experts < i.world:
            err.append(f"vLLM: {m.experts} experts < ep size {i.world}")
        if (m.shared_experts and not i.seq_parallel_moe
                and (m.moe_intermediate * m.shared_experts) % i.tp):
            err.append("vLLM: shared expert intermediate % tp")
    return err


def ep_rank_of(e, n_experts, ep_size):
    """determine_expert_map, "linear": contiguous experts, the first
    n_experts % ep_size ranks one more."""
    base, rem = divmod(n_experts, ep_size)
    big = rem * (base + 1)
    return e // (base + 1) if e < big else rem + (e - big) // base


class VllmSide:
    """Places each parameter on the engines' meshes."""

    def __init__(self, i, first_rank):
        self.i = i
        self.first_rank = first_rank
        self.meshes = {}

    def ranks(self):
        return range(self.first_rank, self.first_rank + self.i.world)

    def _mesh(self, name, make):
        if name not in self.meshes:
            self.meshes[name] = make(name)
        return self.meshes[name]

    def engine_mesh(self):
        # Engine d, TP rank t is global rank first + d*tp + t.
        return self._mesh("infer", lambda name: init_device_mesh(
            (self.i.dp, self.i.tp), ("dp", "tp"), self.first_rank,
            name=name))

    def kv_mesh(self, kv_heads):
        # The same ranks, tp viewed as [tp_kv, tp_rep]: rank t holds KV
        # head t // (tp / num_kv_heads).
        return self._mesh("infer_kv", lambda name: init_device_mesh(
            (self.i.dp, kv_heads, self.i.tp // kv_heads),
            ("dp", "tp_kv", "tp_rep"), self.first_rank, name=name))

    def ep_mesh(self, r):
        # A 0-D mesh: expert on one rank, whole.
        return self._mesh(f"infer_ep{r}", lambda name: DeviceMesh(
            self.first_rank + r, (), name=name))

    def place(self, p, m):
        """(mesh, dims) of a Param (not a KV-split qkv)."""
        n = len(p.shape)
        if p.expert is not None and self.i.ep:
            r = ep_rank_of(p.expert, m.experts, self.i.world)
            return self.ep_mesh(r), [[] for _ in range(n)]
        role = p.role
        if role in ("scol", "srow") and self.i.seq_parallel_moe:
            role = "rep"
        return self.engine_mesh(), tp_dims(n, role, ["tp"])
