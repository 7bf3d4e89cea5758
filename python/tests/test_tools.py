"""Round trips through the tools: the Python .mlir equals the imported JSON,
plans verify, and reshard-run --check executes a scaled-down refit with
every element checked; the report comes back as Python objects."""
import os

import pytest

from reshard import report, tools
from reshard.errors import ReshardError
from reshard.plot import nic_load, traffic
from reshard.refit import build_layout

SMALL = [
    ("llama-3.1-70b", "tp=2,pp=2,dp=2", "tp=2,dp=2", "dgx-h100", 2),
    ("qwen3-235b-a22b", "tp=2,pp=2,ep=2,dp=1", "tp=8,dp=1,ep=1",
     "gb200-nvl72", 2),                 # KV heads replicated (4 < tp 8)
    ("deepseek-v3", "tp=2,pp=2,ep=4,dp=2", "tp=4,dp=2,ep=1", "dgx-h100", 4),
    ("mixtral-8x7b", "tp=2,pp=2,ep=2,dp=1", "tp=4,dp=1,ep=1", "dgx-h100", 2),
    ("glm-4.5", "tp=2,pp=2,ep=4,dp=2", "tp=2,dp=2,ep=1", "dgx-h100", 4),
    ("qwen3-next-80b-a3b", "tp=2,pp=2,ep=4,dp=2", "tp=4,dp=2,ep=1",
     "dgx-h100", 4),
    # Sinks, biases, interleaved w13 rows (dim orders).
    ("gpt-oss-120b", "tp=2,pp=2,ep=4,dp=2", "tp=4,dp=2,ep=1",
     "dgx-h100", 2),
]


@pytest.mark.parametrize("model,train,infer,topo,layers", SMALL)
def test_round_trip_and_check(round_trip, tmp_path, model, train, infer,
                              topo, layers):
    lay = build_layout(model, train, infer, topo, layers=layers,
                       scale_down=64)
    round_trip(lay)
    py = str(tmp_path / "py.mlir")
    tools.verify(py)
    out = tools.check(py)
    assert "all correct" in out


def test_report_objects_and_traffic(have_tools, tmp_path):
    lay = build_layout(*SMALL[2][:4], layers=4, scale_down=64)
    ml = str(tmp_path / "l.mlir")
    lay.write_mlir(ml)
    r = report.compile_plan(ml, str(tmp_path / "out"), "p", "mpi",
                            staging_budget=1 << 20)
    assert r.tensors == len(lay.tensors)
    # The plan crosses the network only as needed.
    assert r.plan.network_bytes == r.lower_bound_network_bytes > 0
    gb = r.baselines["gather-broadcast"]
    assert gb.network_bytes > r.plan.network_bytes
    # Each baseline with the plan's figures: its per-rank table, and its
    # ratios to the same bounds.
    assert sum(x.network.bytes_out for x in gb.per_rank) == gb.network_bytes
    assert gb.ratios["network_bytes_over_lower_bound"] == pytest.approx(
        gb.network_bytes / r.lower_bound_network_bytes)
    assert r.baselines["direct"].ratios["estimated_over_lower_bound_seconds"] \
        == pytest.approx(r.baselines["direct"].estimated_seconds /
                         r.lower_bound_seconds)
    assert {x.rank for x in r.plan.per_rank} == set(range(16))
    for f in ("plan.mlir", "report.json", "p.cpp", "p.h"):
        assert os.path.getsize(tmp_path / "out" / f) > 0
    # Bytes parsed from the runtime program agree with the report's table.
    n, pairs = traffic(str(tmp_path / "out" / "plan.mlir"), r)
    assert n == 16
    load = nic_load(pairs, r.topology)
    for x in r.plan.per_rank:
        assert load.get(x.rank, (0, 0)) == (x.network.bytes_out,
                                            x.network.bytes_in)
        assert pairs.get((x.rank, x.rank), 0) == x.local.bytes_out
    same = report.report(ml, staging_budget=1 << 20)
    assert same.plan == r.plan
    # The JSON's top-level figures are attributes too, as the JSON has them.
    assert r.network_bytes == r.plan.network_bytes == r.raw["network_bytes"]
    assert r.estimated_seconds == r.plan.estimated_seconds
    assert r.busiest_nic_bytes == r.plan.busiest_nic_bytes
    with pytest.raises(AttributeError, match="the report has no 'nope'"):
        r.nope


def test_tool_errors(have_tools, tmp_path, monkeypatch):
    bad = tmp_path / "bad.mlir"
    bad.write_text("reshard.mesh @m shape = [2] axes = [\"x\"] ranks = [0]\n")
    with pytest.raises(ReshardError, match="reshard-opt failed"):
        tools.verify(str(bad))
    monkeypatch.setenv("RESHARD_BIN", str(tmp_path))
    monkeypatch.delenv("RESHARD_BUILD", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(tools, "_REPO", str(tmp_path))
    with pytest.raises(ReshardError, match="set RESHARD_BIN"):
        tools.tool("reshard-opt")
