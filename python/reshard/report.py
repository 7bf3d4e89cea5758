"""The planner's report (reshard-compile --report) as Python objects, and
the one-command compile of a layout into a plan, its report and C++."""
import json
import os
from dataclasses import dataclass, field

from . import tools
from .errors import ReshardError, read_json



@dataclass
class LinkLoad:
    bytes_out: int = 0
    bytes_in: int = 0
    messages_out: int = 0
    messages_in: int = 0


@dataclass
class RankLoad:
    rank: int
    local: LinkLoad
    nvlink: LinkLoad
    network: LinkLoad


@dataclass
class Figures:
    """One plan's (or baseline's) figures; docs/CostModel.md."""
    network_bytes: int
    nvlink_bytes: int
    local_bytes: int
    network_messages: int
    nvlink_messages: int
    local_copies: int
    busiest_nic_bytes: int
    busiest_nic_out_bytes: int
    busiest_nic_out_rank: int
    busiest_nic_in_bytes: int
    busiest_nic_in_rank: int
    steps: int
    estimated_seconds: float
    per_rank: list = field(default_factory=list)   # of RankLoad
    ratios: dict = field(default_factory=dict)     # a baseline's, to the bounds

    @classmethod
    def from_json(cls, d):
        kw = {k: d[k] for k in cls.__dataclass_fields__ if k in d
              and k != "per_rank"}
        ranks = [RankLoad(r["rank"], *(LinkLoad(**r[c]) for c in
                                       ("local", "nvlink", "network")))
                 for r in d.get("per_rank", [])]
        return cls(per_rank=ranks, **kw)


@dataclass
class Report:
    tensors: int
    pieces: int
    plan: Figures
    baselines: dict            # name -> Figures
    lower_bound_network_bytes: int
    lower_bound_busiest_nic_bytes: int
    lower_bound_seconds: float
    ratios: dict
    topology: dict
    raw: dict                  # the JSON as the tool wrote it

    @classmethod
    def from_json(cls, d):
        return cls(tensors=d["tensors"], pieces=d["pieces"],
                   plan=Figures.from_json(d["plan"]),
                   baselines={k: Figures.from_json(v)
                              for k, v in d.get("baselines", {}).items()},
                   lower_bound_network_bytes=d["lower_bound_network_bytes"],
                   lower_bound_busiest_nic_bytes=d[
                       "lower_bound_busiest_nic_bytes"],
                   lower_bound_seconds=d["lower_bound_seconds"],
                   ratios=d.get("ratios", {}), topology=d.get("topology", {}),
                   raw=d)

    def __getattr__(self, name):
        """The report's other top-level JSON keys as attributes
        (network_bytes, estimated_seconds, busiest_nic_bytes, quantized,
        ...), as the JSON has them beside `plan`."""
        raw = self.__dict__.get("raw")
        if name.startswith("_") or raw is None or name not in raw:
            raise AttributeError(f"the report has no {name!r}")
        return raw[name]

    @classmethod
    def load(cls, path):
        d = read_json(path)
        try:
            return cls.from_json(d)
        except (KeyError, TypeError, AttributeError) as e:
            raise ReshardError(f"{path}: not a reshard report "
                               f"(--reshard-report=format=json): {e!r}")


def report(layout_path, staging_budget=1 << 30, per_rank=True):
    """Plans a layout (.json, or .mlir at any stage before lowering) with
    reshard-compile and returns its Report."""
    out = tools.run("reshard-compile", [
        layout_path, f"--staging-budget={int(staging_budget)}",
        "--report=-"])
    d = json.loads(out)
    if not per_rank:
        for f in [d["plan"], *d.get("baselines", {}).values()]:
            f.pop("per_rank", None)
    return Report.from_json(d)


def compile_plan(layout_path, out_dir, plan_name="refit", backend="mpi",
                 staging_budget=1 << 30):
    """Plans, reports, lowers and emits C++ into out_dir with one
    reshard-compile: report.json, plan.mlir (the per-rank reshard_rt
    programs), PLAN.cpp and PLAN.h. Returns the Report."""
    os.makedirs(out_dir, exist_ok=True)
    rep = os.path.join(out_dir, "report.json")
    tools.run("reshard-compile", [
        layout_path, f"--backend={backend}", f"--plan-name={plan_name}",
        f"--staging-budget={int(staging_budget)}",
        "-o", os.path.join(out_dir, f"{plan_name}.cpp"),
        f"--header={os.path.join(out_dir, plan_name + '.h')}",
        f"--mlir={os.path.join(out_dir, 'plan.mlir')}", f"--report={rep}"])
    return Report.load(rep)
