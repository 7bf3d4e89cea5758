"""python -m reshard end to end: params, plan, plot, and clear errors (exit
2, `reshard: error:`, no traceback). Also the benchmark's generator, which
wraps the package, keeps its CLI and output."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

MODELS = os.path.join(ROOT, "examples", "models")


def cli(env, *args):
    return subprocess.run([sys.executable, "-m", "reshard", *args],
                          capture_output=True, text=True, env=env, cwd=ROOT)


def test_params(cli_env):
    r = cli(cli_env, "params", "--model",
            os.path.join(MODELS, "llama-3.1-70b", "config.json"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == ("total: 70,553,706,496 parameters (70.55B); public "
                         "70.55B: +0.005%")
    assert ("model.layers.79.self_attn.k_proj.weight\t[1024, 8192]\tbf16\t"
            "8388608") in lines
    assert len(lines) == 2 + 80 * 9 + 2
    r = cli(cli_env, "params", "--model", "deepseek-v3", "--fused",
            "--layers", "1")
    assert "model.layers.0.self_attn.fused_qkv_a_proj.weight\t[2112, 7168]" \
        in r.stdout


def test_plan_and_plot(cli_env, have_tools, tmp_path):
    out = tmp_path / "out"
    r = cli(cli_env, "plan", "--model", "deepseek-v3", "--source",
            "megatron:tp=2,pp=2,ep=4,dp=2", "--dest", "vllm:tp=4,engines=2,ep=1",
            "--topology", "dgx-h100", "--layers", "4", "--scale-down", "64",
            "--backend", "mpi", "--plan-name", "dsv3", "--staging-budget",
            "1M", "-o", str(out))
    assert r.returncode == 0, r.stderr
    for f in ("layout.json", "layout.mlir", "report.json", "plan.mlir",
              "dsv3.cpp", "dsv3.h"):
        assert (out / f).stat().st_size > 0, f
    layout = json.loads((out / "layout.json").read_text())
    assert layout["scenario"]["infer"]["ranks"] == [8, 15]
    assert "MPI_Comm" in (out / "dsv3.h").read_text()
    rep = json.loads((out / "report.json").read_text())
    assert rep["network_bytes"] == rep["lower_bound_network_bytes"]

    r = cli(cli_env, "plot", str(out))
    assert r.returncode == 0, r.stderr
    png, svg = out / "traffic.png", out / "traffic.svg"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000
    assert b"<svg" in svg.read_bytes()[:2000]

    # A layout file is planned first.
    r = cli(cli_env, "plot", str(out / "layout.json"), "-o",
            str(tmp_path / "t.svg"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.svg").read_text().rstrip().endswith("</svg>")


def test_plan_nccl_default(cli_env, have_tools, tmp_path):
    r = cli(cli_env, "plan", "--model", "llama-3.1-70b", "--source",
            "megatron:tp=2,pp=2,dp=1", "--dest", "vllm:tp=2,dp=2",
            "--layers", "2", "--scale-down", "64", "--colocated", "-q",
            "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "nccl" in (tmp_path / "refit.h").read_text().lower()


@pytest.mark.parametrize("args,msg", [
    (["--source", "megatron:tp=x", "--dest", "vllm:tp=8"],
     "--source: tp='x' is not an integer"),
    (["--source", "tp=8,dp=1", "--dest", "vllm:tp=8"],
     "give FRAMEWORK:SPEC"),
    (["--source", "stages=40:40,pp=2", "--dest", "vllm:tp=8"],
     "give FRAMEWORK:SPEC"),
    (["--source", "megatron:megatron:tp=8", "--dest", "vllm:tp=8"],
     "give FRAMEWORK:SPEC"),
    (["--source", "megatron:tp=8", "--dest", "vllm:VLLM:tp=8"],
     "give FRAMEWORK:SPEC"),
    (["--source", "fsdp:tp=8,dp=1", "--dest", "vllm:tp=8"],
     "framework 'fsdp' is not supported"),
    (["--source", "megatron:tp=3,dp=1", "--dest", "vllm:tp=8"],
     "num_attention_heads 64 % tp 3"),
    (["--source", "megatron:tp=8,dp=1", "--dest", "vllm:tp=8",
      "--topology", "dgx-a100"], "unknown topology 'dgx-a100'"),
    (["--source", "megatron:tp=8,dp=1", "--dest", "vllm:tp=8",
      "--staging-budget", "lots"], "--staging-budget 'lots'"),
    (["--source", "megatron:tp=8,dp=1", "--dest", "vllm:tp=8,w13=w31"],
     "--dest: w13='w31': give gate_up or up_gate"),
])
def test_plan_errors(cli_env, tmp_path, args, msg):
    r = cli(cli_env, "plan", "--model", "llama-3.1-70b", "-o",
            str(tmp_path), "--layout-only", *args)
    assert r.returncode == 2
    assert r.stderr.startswith("reshard: error: ") and msg in r.stderr
    assert "Traceback" not in r.stderr


def test_plan_says_the_pipeline_stages(cli_env, tmp_path):
    # Megatron's virtual chunks and vLLM's PP stages in the summary line.
    r = cli(cli_env, "plan", "--model", "llama-3.1-70b", "--layout-only",
            "--layers", "8", "--scale-down", "64", "--source",
            "megatron:tp=2,pp=2,vpp=2", "--dest", "vllm:tp=2,pp=2",
            "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "train ranks 0..3, stages [4, 4] (2 chunks each); infer ranks " \
        "4..7, stages [4, 4]" in r.stdout, r.stdout


def test_plan_takes_megatrons_pipeline_layout(cli_env, tmp_path):
    # Its commas and '|' inside the spec; stages hold 3+2, 2+2, 2+2, 2+1.
    r = cli(cli_env, "plan", "--model", "deepseek-v3", "--layout-only",
            "--layers", "16", "--scale-down", "8", "--source",
            "megatron:tp=1,pp=4,dp=2,layout=Et*3|(tt|)*6,tL,ep=2", "--dest",
            "vllm:tp=8", "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "train ranks 0..7, stages [5, 4, 4, 3] (layout Et*3|(tt|)*6,tL, "\
        "2 chunks each)" in r.stdout, r.stdout
    info = json.loads((tmp_path / "layout.json").read_text())["scenario"]
    assert info["train"]["chunk_layers"][3] == [[7, 8], [15, 15]]
    r = cli(cli_env, "plan", "--model", "deepseek-v3", "--layout-only",
            "--source", "megatron:tp=1,pp=4,layout=Et*3|(tt|)*6,tL",
            "--dest", "vllm:tp=8", "-o", str(tmp_path))
    assert r.returncode == 2 and "holds 16 decoder layers (t), not 61" in \
        r.stderr and "Traceback" not in r.stderr, r.stderr


def test_plan_pads_the_vocab(cli_env, tmp_path):
    # Megatron-LM's padded vocab (vocab_pad=) from the --source spec:
    # 129280 rows padded to a multiple of 128*8; vLLM's 64 pads nothing.
    r = cli(cli_env, "plan", "--model", "deepseek-v3", "--layout-only",
            "--layers", "1", "--source", "megatron:tp=8,ep=8,vocab_pad=128",
            "--dest", "vllm:tp=8", "-o", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "; train vocab padded to 130048" in r.stdout, r.stdout
    with open(tmp_path / "layout.json") as f:
        d = json.load(f)
    assert d["scenario"]["train"]["vocab_pad"] == 128
    parts = [t for t in d["tensors"]
             if t.get("fused_into") == "model.embed_tokens.weight"]
    assert sum(t["shape"][0] for t in parts) == 129280
    assert all(t["fused_buffer_rows"] == {"src": 16256, "dst": 16160}
               for t in parts)


def test_plan_eplb_expert_map(cli_env, tmp_path):
    # EPLB's current map from a JSON file: copies where a rank holds an
    # expert twice; bad maps are named with the file.
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(dict(
        model_type="qwen3_moe", num_hidden_layers=2, hidden_size=16,
        num_attention_heads=4, num_key_value_heads=2, head_dim=4,
        intermediate_size=32, moe_intermediate_size=8, num_experts=8,
        mlp_only_layers=[0], vocab_size=256)))
    good = tmp_path / "map.json"
    good.write_text(json.dumps([5, 5, 1, 2, 3, 4, 6, 7, 0, 7, 0, 7]))
    args = ["plan", "--model", str(cfg), "--layout-only", "--source",
            "megatron:tp=2,ep=2", "--dest", "vllm:tp=1,dp=4,ep=1,redundant=4",
            "-o", str(tmp_path / "out")]
    r = cli(cli_env, *args, "--expert-map", str(good))
    assert r.returncode == 0, r.stderr
    assert "; EPLB 4 redundant experts (one row map)" in r.stdout, r.stdout
    with open(tmp_path / "out" / "layout.json") as f:
        names = [t["name"] for t in json.load(f)["tensors"]]
    assert "model.layers.1.mlp.experts.5.gate_up_proj.weight.copy1" in names
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([0] * 12))
    r = cli(cli_env, *args, "--expert-map", str(bad))
    assert r.returncode != 0 and "logical expert 1 has no physical copy" \
        in r.stderr, r.stderr
    bad.write_text("[1, 2")
    r = cli(cli_env, *args, "--expert-map", str(bad))
    assert r.returncode != 0 and f"--expert-map {bad}: not JSON" \
        in r.stderr, r.stderr
    bad.write_text('"text"')
    r = cli(cli_env, *args, "--expert-map", str(bad))
    assert r.returncode != 0 and "expert_map must be EplbState's" \
        in r.stderr, r.stderr


def test_plan_w13_up_gate(cli_env, tmp_path):
    # FlashInfer's [up; gate] w13 from the --dest spec, on routed experts.
    r = cli(cli_env, "plan", "--model", "qwen3-235b-a22b", "--layout-only",
            "--layers", "1", "--scale-down", "64", "--source",
            "megatron:tp=2,ep=2,dp=1", "--dest", "vllm:tp=2,w13=up_gate",
            "-o", str(tmp_path), "-q")
    assert r.returncode == 0, r.stderr
    with open(tmp_path / "layout.json") as f:
        d = json.load(f)
    t = {t["name"]: t for t in d["tensors"]}
    e0 = t["model.layers.0.mlp.experts.0.gate_up_proj.weight"]
    assert e0["dst"]["order"] == {"0": [[24, 24], [0, 24]]}
    assert e0["dst"]["blocks"] == {"0": [24, 24]} and "order" not in e0["src"]
    assert d["scenario"]["infer"]["w13"] == "up_gate"
    # Megatron's linear_qkv order (4 groups over tp 2).
    q = t["model.layers.0.self_attn.qkv_proj.weight"]
    assert len(q["src"]["order"]["0"]) == 12 and "blocks" not in q["src"]


@pytest.mark.parametrize("topo,msg", [
    ("{", "--topology TOPO: not JSON"),
    ('{"gpus_per_node": 0, "nvl_domain_size": 8, "nic_GBps_per_gpu": 1, '
     '"nvlink_GBps_per_gpu": 1}', "gpus_per_node=0 is not a positive"),
    ("[1]", "give a preset name or a JSON object"),
])
def test_plan_bad_topology_file(cli_env, tmp_path, topo, msg):
    # These used to end in a traceback (JSONDecodeError, ZeroDivisionError,
    # TypeError).
    f = tmp_path / "topo.json"
    f.write_text(topo)
    r = cli(cli_env, "plan", "--model", "llama-3.1-70b", "--layout-only",
            "--source", "megatron:tp=8,dp=1", "--dest", "vllm:tp=8",
            "--topology", str(f), "-o", str(tmp_path / "out"))
    assert r.returncode == 2, r.stderr
    assert r.stderr.startswith("reshard: error: ")
    assert msg.replace("TOPO", str(f)) in r.stderr
    assert "Traceback" not in r.stderr


def test_unwritable_output_and_bad_inputs(cli_env, tmp_path):
    # An output path that is a file, a staging budget the planner cannot
    # take, a bad --layers and a broken report.json: `reshard: error:`,
    # exit 2, no traceback (the first and last used to trace back, the
    # budget to fail inside reshard-opt with exit 1, --layers -1 to print
    # an empty model).
    spec = ["--model", "llama-3.1-70b", "--layers", "1", "--scale-down", "64",
            "--source", "megatron:tp=2,dp=1", "--dest", "vllm:tp=2"]
    f = tmp_path / "file"
    f.write_text("")
    cases = [
        (["plan", *spec, "--layout-only", "-o", str(f)], "File exists"),
        (["plan", *spec, "--layout-only", "-o", str(f / "sub")],
         "Not a directory"),
        (["plan", *spec, "--staging-budget", "0", "-o", str(tmp_path)],
         "--staging-budget '0': give a size from 1 byte"),
        (["plan", *spec, "--staging-budget", "99999999999T", "-o",
          str(tmp_path)], "to 2^63-1 bytes"),
        (["params", "--model", "llama-3.1-70b", "--layers", "-1"],
         "layers (--layers) must be in [0, 80]"),
    ]
    d = tmp_path / "plotdir"
    d.mkdir()
    (d / "plan.mlir").write_text("")
    (d / "report.json").write_text("{}")
    cases.append((["plot", str(d)], "not a reshard report"))
    for args, msg in cases:
        r = cli(cli_env, *args)
        assert r.returncode == 2, (args, r.stderr)
        assert r.stderr.startswith("reshard: error: ") and msg in r.stderr, \
            (args, r.stderr)
        assert "Traceback" not in r.stderr


def test_config_errors(cli_env, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text('{"model_type": "bert"}')
    r = cli(cli_env, "params", "--model", str(cfg))
    assert r.returncode == 2 and "unsupported model_type 'bert'" in r.stderr
    cfg.write_text('{"model_type": "llama", "hidden_size": 4096}')
    r = cli(cli_env, "params", "--model", str(cfg))
    assert r.returncode == 2 and "lacks num_hidden_layers" in r.stderr
    cfg.write_text("{")
    r = cli(cli_env, "params", "--model", str(cfg))
    assert r.returncode == 2 and "not JSON" in r.stderr
    cfg.write_text('{"model_type": "llama", "num_hidden_layers": 1, '
                   '"hidden_size": 8, "num_attention_heads": 2, '
                   '"vocab_size": 64, "intermediate_size": 8, '
                   '"num_key_value_heads": "x"}')
    r = cli(cli_env, "params", "--model", str(cfg))   # was a TypeError
    assert r.returncode == 2 and "num_key_value_heads='x'" in r.stderr
    assert "Traceback" not in r.stderr
    r = cli(cli_env, "plot", str(tmp_path))
    assert r.returncode == 2 and "no plan.mlir" in r.stderr


def test_bench_generator_wraps_the_package(tmp_path):
    args = ["--model", "qwen3-235b-a22b", "--train", "tp=2,pp=2,ep=2,dp=1",
            "--infer", "tp=4,dp=2,ep=1", "--colocated", "--layers", "2",
            "--scale-down", "64", "--topology", "gb200-nvl72"]
    r = subprocess.run([sys.executable, os.path.join(
        ROOT, "bench", "make_refit_scenario.py"), *args, "--out",
        str(tmp_path / "a.json")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "public 235.09B: +0.002%" in r.stderr
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from reshard.refit import build_layout
    lay = build_layout("qwen3-235b-a22b", "tp=2,pp=2,ep=2,dp=1",
                       "tp=4,dp=2,ep=1", "gb200-nvl72", layers=2,
                       scale_down=64, colocated=True)
    lay.write_json(str(tmp_path / "b.json"))
    assert (tmp_path / "a.json").read_bytes() == \
        (tmp_path / "b.json").read_bytes()
