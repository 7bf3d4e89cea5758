"""reshard.compile and Plan.run under `mpirun -n N python` with torch CPU
tensors (runtime_worker.py is each process): random layouts with storage
orders on both sides, blocks, several axes on one dim and uneven sizes;
destination shards that are views into one stacked tensor; verify=True,
also against a byte flipped in flight; every bad argument raising on every
rank with nothing written; a plan of another layout; eight ranks compiling
at once. Every destination element is checked against the layout oracle of
test/Tools/reshard-run/Inputs/shards.py.
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from orders_ref import (FP8_MOE, GATED, GPT_OSS, TINY_DSV3, TINY_GLM,
                        TINY_QWEN3_5, TINY_QWEN3_NEXT)

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "runtime_worker.py")

# Loopback and shared memory only; root allowed (containers, CI); idle
# ranks yield, since the suite oversubscribes two cores.
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_btl": "self,vader", "OMPI_MCA_pml": "ob1",
           "OMPI_MCA_oob_tcp_if_include": "lo", "HWLOC_COMPONENTS": "-gl",
           "OMPI_MCA_mpi_yield_when_idle": "1", "OMP_NUM_THREADS": "1",
           # A rank that dies or stalls turns into an error, not a hang.
           "RESHARD_TIMEOUT_SECONDS": "120"}


@pytest.fixture(scope="module")
def mpi(have_tools, tmp_path_factory):
    """Skips without mpirun, mpi4py, torch or mpicxx; gives a runner."""
    for mod in ("mpi4py", "torch"):
        pytest.importorskip(mod)
    for exe in ("mpirun", "mpicxx"):
        if not shutil.which(exe):
            pytest.skip(f"{exe} is not installed")
    cache = str(tmp_path_factory.mktemp("plans"))

    def run(n, *args, env=None, timeout=600):
        out = tempfile.mkdtemp(dir=cache)
        e = dict(os.environ, **MPI_ENV, RESHARD_CACHE_DIR=cache,
                 RESHARD_WORKER_OUT=out)
        e.update(env or {})
        cmd = ["mpirun", "--oversubscribe", "-n", str(n)]
        for k in list(env or {}) + ["RESHARD_TIMEOUT_SECONDS"]:
            cmd += ["-x", k]
        cmd += [sys.executable, "-m", "mpi4py", WORKER] + [str(a)
                                                            for a in args]
        r = subprocess.run(cmd, capture_output=True, text=True, env=e,
                           timeout=timeout)
        lines = []
        for name in sorted(os.listdir(out)):
            with open(os.path.join(out, name)) as f:
                lines += f.read().splitlines()
        lines.sort()
        assert r.returncode == 0 and len(lines) >= n, r.stdout + r.stderr
        return lines
    return run


def random_order(rng, n):
    cuts = sorted([0, n] + [rng.randrange(n + 1)
                            for _ in range(rng.randrange(4))])
    runs = [[a, b - a] for a, b in zip(cuts, cuts[1:])]
    rng.shuffle(runs)
    if rng.random() < 0.3:
        runs.insert(rng.randrange(len(runs) + 1), [rng.randrange(n + 2), 0])
    return runs


def random_side(rng, mesh, shape):
    dims = [[] for _ in shape]
    for axis in mesh["axes"]:
        if rng.random() < 0.7 and shape:
            dims[rng.randrange(len(shape))].append(axis)
    side = {"mesh": mesh["name"], "dims": dims}
    for d, n in enumerate(shape):
        if rng.random() < 0.3 and n > 1:
            cut = rng.randrange(n + 1)
            side.setdefault("blocks", {})[str(d)] = [cut, n - cut]
        if rng.random() < 0.6:
            side.setdefault("order", {})[str(d)] = random_order(rng, n)
    if len(shape) >= 2 and rng.random() < 0.4:
        perm = list(range(len(shape)))
        rng.shuffle(perm)
        side["dim_order"] = perm    # torch buffers of the stored shape
    return side


def random_layout(seed, ranks=4, tensors=6, experts=3):
    """Tensors between two random meshes over `ranks` ranks, the last
    `experts` of one shape and sharding (a stacked expert tensor)."""
    rng = random.Random(seed)
    meshes = {}
    for name in ("train", "infer"):
        shape = rng.choice([[ranks], [2, ranks // 2], [ranks // 2, 2]])
        axes = [f"{name[0]}{i}" for i in range(len(shape))]
        order = list(range(ranks))
        rng.shuffle(order)
        meshes[name] = {"shape": shape, "axes": axes, "ranks": order,
                        "name": name}
    out = []
    for t in range(tensors):
        shape = [rng.randrange(1, 9) for _ in range(rng.randrange(1, 4))]
        out.append({"name": f"t{t}", "shape": shape,
                    "dtype": rng.choice(["bf16", "fp32", "int8", "fp64"]),
                    "src": random_side(rng, meshes["train"], shape),
                    "dst": random_side(rng, meshes["infer"], shape)})
    shape = [6, 5]
    src = random_side(rng, meshes["train"], shape)
    dst = random_side(rng, meshes["infer"], shape)
    for e in range(experts):
        out.append({"name": f"experts.{e}.w13", "shape": shape,
                    "dtype": "bf16", "src": src, "dst": dst})
    for m in meshes.values():
        del m["name"]
    for t in out:
        for side in ("src", "dst"):
            t[side] = dict(t[side])
    return {"meshes": meshes, "tensors": out}


def write(tmp_path, name, layout):
    path = tmp_path / name
    path.write_text(json.dumps(layout))
    return path


def assert_all_ok(lines, n):
    assert len(lines) == n and all(": ok " in l and " 0 wrong" in l
                                   for l in lines), "\n".join(lines)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_layouts_with_orders(mpi, tmp_path, seed):
    layout = write(tmp_path, "layout.json", random_layout(seed))
    assert_all_ok(mpi(4, "check", layout, "--verify", "--stacked"), 4)


def test_streams_through_transit_gpus(mpi):
    """A plan whose holder streams enter a domain through GPUs that are not
    their receivers (test/Integration/mpi/Inputs/transits.json at a 256
    KiB budget): every element checked, and verify=True digests each
    stream at its holder and its receiver across the transit."""
    root = os.path.dirname(os.path.dirname(HERE))
    layout = os.path.join(root, "test", "Integration", "mpi", "Inputs",
                          "transits.json")
    assert_all_ok(mpi(8, "check", layout, "--verify", "--staging-budget",
                      262144), 8)


def test_verify_catches_a_byte_flipped_in_flight(mpi, tmp_path):
    layout = write(tmp_path, "layout.json", random_layout(3, ranks=2))
    lines = mpi(2, "check", layout, "--verify",
                env={"RESHARD_TEST_FLIP_RECEIVED_BYTE": "1"})
    for l in lines:
        assert "raised" in l and "verify failed: tensor '" in l, l
        assert re.search(r"rank \d+ holds \d+ bytes from rank \d+", l), l


BAD = ["src-shape", "src-dtype", "dst-device", "dst-noncontiguous",
       "src-missing", "dst-extra", "src-not-a-tensor", "src-sparse",
       "src-dst-overlap"]


def test_bad_arguments_raise_on_every_rank(mpi, tmp_path):
    layout = write(tmp_path, "layout.json", random_layout(4, ranks=2))
    lines = mpi(2, "bad", layout, *BAD)
    assert len(lines) == 2 * len(BAD), "\n".join(lines)
    for kind in BAD:
        mine = [l for l in lines if f": {kind}: " in l]
        assert len(mine) == 2 and all("raised (untouched)" in l
                                      for l in mine), "\n".join(mine)
        # The rank with the bad tensor says what is wrong; the other that
        # another rank rejected its arguments.
        assert any("another rank rejected" in l for l in mine), mine
    said = "\n".join(lines)
    for phrase in ("but this rank's shard is", "the plan's is",
                   "an MPI plan needs cpu memory", "not contiguous",
                   "is missing (rank 1 holds a shard", "is not a tensor of plan",
                   "is not a tensor: pass", "share memory (bytes 0 to"):
        assert phrase in said, phrase


def test_verify_on_a_larger_communicator(mpi, tmp_path):
    """A rank past the plan's holds nothing and still takes part in
    verify's exchanges (it used to raise alone, the others waiting)."""
    layout = write(tmp_path, "layout.json", random_layout(3, ranks=2))
    assert_all_ok(mpi(3, "check", layout, "--verify"), 3)


def test_verify_on_some_ranks_only_fails_on_every_rank(mpi, tmp_path):
    """verify=True is in the plan's agreement: a rank asking for it alone
    fails with the others before any byte moves (it used to wait forever
    for digests the others never sent)."""
    layout = write(tmp_path, "layout.json", random_layout(3, ranks=2))
    lines = mpi(3, "check", layout, "--verify-on-rank-0")
    assert len(lines) == 3, lines
    for l in lines:
        assert "raised (untouched)" in l and "disagree on verify" in l, l
    assert sum("(on here;" in l for l in lines) == 1, lines


@pytest.mark.parametrize("fault, said", [
    ("--fail-after-agreement", "rank 1: injected failure after the run"),
    ("--fail-digests", "rank 1: verify could not digest its shards: "
                       "injected digest failure")])
def test_a_rank_failing_after_the_agreement_fails_every_rank(mpi, tmp_path,
                                                            fault, said):
    """With verify=True the peers wait for each rank's digests: a rank
    whose run or digests fail once the ranks agreed still joins the
    exchange and says why, and every rank raises (it used to raise alone
    and leave the others waiting)."""
    layout = write(tmp_path, "layout.json", random_layout(3, ranks=2))
    lines = mpi(3, "check", layout, "--verify", fault)
    assert len(lines) == 3, lines
    for l in lines:
        assert "raised" in l and said in l, l


def test_a_rank_missing_from_the_exchange_is_a_timeout(mpi, tmp_path):
    """verify's exchange has the plan's deadline: a rank that never joins
    it (here rank 1 skips it) is an error on the others, not a hang."""
    layout = write(tmp_path, "layout.json", random_layout(3, ranks=2))
    lines = mpi(3, "check", layout, "--verify", "--skip-exchange",
                env={"RESHARD_TIMEOUT_SECONDS": "3"})
    assert len(lines) == 3, lines
    late = [l for l in lines if "did not complete within "
            "RESHARD_TIMEOUT_SECONDS=3" in l and "raised" in l]
    assert len(late) == 2 and not any(l.startswith("rank 1:") for l in late), \
        lines


def test_a_late_rank_fails_before_anything_moves(mpi, tmp_path):
    """A rank that joins the agreement after its peer timed out in it finds
    the first round complete and learns from the second that its peer gave
    up: both raise with their shards untouched, and verify's exchange,
    each rank's next collective, pairs with its peer's (with one round the
    late rank's barrier met its peer's exchange)."""
    layout = write(tmp_path, "layout.json", random_layout(5, ranks=2))
    lines = mpi(2, "check", layout, "--verify", "--late",
                env={"RESHARD_TIMEOUT_SECONDS": "2"})
    assert len(lines) == 2, lines
    punctual, late = sorted(lines)
    assert punctual.startswith("rank 0: raised (untouched): ") and \
        "not every rank joined the plan agreement within 2 s" in punctual, \
        lines
    assert late.startswith("rank 1: raised (untouched): ") and \
        "some gave up waiting for this one first" in late, lines
    # A timeout (code 6, on both) keeps the run's buffers referenced: a
    # send released at the deadline may still read them.
    assert punctual.endswith("[buffers kept: 1]"), lines
    assert late.endswith("[buffers kept: 1]"), lines
    assert not any("MPI" in l and "rror" in l for l in lines), lines


def test_the_deadline_is_read_as_the_c_runtime_reads_it(monkeypatch):
    """RESHARD_TIMEOUT_SECONDS means the same to verify's exchange as to
    the plan's waits (CallChecks.h parse_timeout; the same cases in
    unittests/ExecutionEngine/EngineTest.cpp): strtod of the whole text but
    blanks, finite and above 0; anything else is 0 here (and refused by the
    run: RESHARD_ERR_ARGS)."""
    from reshard import comms
    for text, want in (("30", 30), ("30s", 0), (" 2.5 ", 2.5), ("-1", 0),
                       ("1e", 0), ("0x10", 16), ("0x1p4", 16), ("1_0", 0),
                       (".5", .5), ("5.", 5), ("abc", 0), ("", 0), (" ", 0),
                       ("inf", 0), ("nan", 0), ("+7", 7), ("0", 0),
                       ("-0", 0), ("1e-3", 1e-3), ("0x.8", .5),
                       ("12 34", 0), ("\t 3", 3), ("+.5", .5), ("1e+", 0),
                       ("0x", 0), ("-0x1p-2", 0), ("INFINITY", 0),
                       ("\xa05", 0), ("\u06630", 0), ("1e999", 0),
                       ("0x1p1024", 0), ("1e-9", 1e-9), ("\n", 0),
                       ("3\n", 3)):
        monkeypatch.setenv("RESHARD_TIMEOUT_SECONDS", text)
        assert comms.timeout_seconds() == want, repr(text)
    monkeypatch.delenv("RESHARD_TIMEOUT_SECONDS")
    assert comms.timeout_seconds() == 0


def test_who_tells_its_peers_why_it_failed(monkeypatch):
    """After a failed run a rank joins verify's exchange only where its
    peers' wait is bounded (a deadline) and the exchange's communicator
    is not the one the failure aborted (a torch NCCL group's own)."""
    from types import SimpleNamespace
    from reshard.runtime import tells_peers
    mpi = SimpleNamespace(exchange_on_aborted_comm=False)
    group_own = SimpleNamespace(exchange_on_aborted_comm=True)
    monkeypatch.setenv("RESHARD_TIMEOUT_SECONDS", "60")
    assert all(tells_peers(rc, True, mpi) for rc in (5, 6, 7))
    assert not any(tells_peers(rc, True, mpi) for rc in (1, 2, 3, 4, 8))
    assert not tells_peers(6, False, mpi)
    assert not tells_peers(6, True, group_own)
    for unbounded in ("0", "inf", "1e999", "-5"):
        monkeypatch.setenv("RESHARD_TIMEOUT_SECONDS", unbounded)
        assert not tells_peers(6, True, mpi), unbounded


def test_a_failed_exchange_keeps_the_ranks_own_failure():
    from types import SimpleNamespace
    from reshard import ReshardError
    from reshard.verify import verify_run

    def late(_):
        raise ReshardError("rank 0: verify's exchange of sizes did not "
                           "complete within RESHARD_TIMEOUT_SECONDS=1")
    comm = SimpleNamespace(size=2, alltoall=late)
    plan = SimpleNamespace(name="p", num_ranks=2)
    with pytest.raises(ReshardError, match=r"p: rank 0: step 3 timed out; "
                       r"then verify's exchange failed: rank 0: verify's"):
        verify_run(plan, comm, 0, [], [], "p: rank 0: step 3 timed out")


def test_the_flip_hook_takes_only_1(mpi, tmp_path):
    layout = write(tmp_path, "layout.json", random_layout(3, ranks=2))
    for value in ("0", ""):
        assert_all_ok(mpi(2, "check", layout, "--verify",
                          env={"RESHARD_TEST_FLIP_RECEIVED_BYTE": value}), 2)


def test_comm_null_is_refused(mpi, tmp_path):
    layout = write(tmp_path, "layout.json", random_layout(3, ranks=2))
    lines = mpi(2, "comm-null", layout)
    assert all("raised: the communicator is MPI.COMM_NULL" in l
               for l in lines), "\n".join(lines)


def test_what_cannot_be_an_nccl_communicator_is_refused():
    pytest.importorskip("torch")
    from reshard import ReshardError, comms
    for bogus in (True, 0, 1, 4096 + 4, (1 << 40) + 4):
        with pytest.raises(ReshardError, match="not an ncclComm_t handle"):
            comms.wrap(bogus, "nccl")


def test_plan_of_another_layout_is_refused(mpi, tmp_path):
    a = write(tmp_path, "a.json", random_layout(5, ranks=2))
    other = random_layout(5, ranks=2)
    other["tensors"][0]["shape"][0] += 1  # one more row, orders dropped
    for side in ("src", "dst"):
        other["tensors"][0][side].pop("order", None)
        other["tensors"][0][side].pop("blocks", None)
    b = write(tmp_path, "b.json", other)
    lines = mpi(2, "other", a, b)
    assert all("raised (untouched)" in l and "run different plans" in l
               for l in lines), "\n".join(lines)


def test_eight_ranks_compile_at_once(mpi, tmp_path):
    layout = write(tmp_path, "layout.json", random_layout(6, ranks=4))
    cache = tmp_path / "cache"
    lines = mpi(8, "compile", layout, cache)
    assert all("ok compiled 1 distinct libraries" in l for l in lines), lines
    assert len({l.split("fingerprint")[1] for l in lines}) == 1
    libs = [p for p in os.listdir(cache) if p.endswith(".so")]
    assert len(libs) == 1 and not [p for p in os.listdir(cache)
                                   if p.startswith("build-")], libs


# Megatron -> vLLM on the same 8 ranks: Llama-3.1-70B (PP 2), Qwen3-235B-A22B
# (4 query groups over TP 8: groups < TP, KV replicas as pieces), and a
# model with an attention output gate (2 groups over TP 4), FlashInfer's
# [up; gate] w13. Scaled down 64x where the model is real.
PRESETS = [
    ("llama", "llama-3.1-70b", "tp=4,pp=2,dp=1", "tp=8,dp=1", 64),
    ("qwen", "qwen3-235b-a22b", "tp=8,ep=8,dp=1", "tp=8,dp=1,ep=1", 64),
    ("gated", "gated", "tp=4,ep=2,dp=2", "tp=4,dp=2,w13=up_gate", 1),
]


def preset_slices(tmp_path):
    """The three refits as one layout (names and meshes prefixed)."""
    from reshard.refit import build_layout
    merged = {"meshes": {}, "tensors": []}
    for tag, model, train, infer, scale in PRESETS:
        if model == "gated":
            model = str(tmp_path / "gated.json")
            with open(model, "w") as f:
                json.dump(GATED, f)
        lay = build_layout(model, train, infer, layers=1, scale_down=scale,
                           colocated=True)
        path = tmp_path / f"{tag}.json"
        lay.write_json(str(path))
        d = json.loads(path.read_text())
        for name, mesh in d["meshes"].items():
            merged["meshes"][f"{tag}.{name}"] = mesh
        for t in d["tensors"]:
            t["name"] = f"{tag}.{t['name']}"
            for side in ("src", "dst"):
                t[side]["mesh"] = f"{tag}.{t[side]['mesh']}"
            merged["tensors"].append(t)
    return merged


def test_megatron_to_vllm_slices_from_torch(mpi, tmp_path):
    layout = write(tmp_path, "presets.json", preset_slices(tmp_path))
    assert_all_ok(mpi(8, "check", layout, "--verify", "--stacked"), 8)


def test_load_finds_the_plans_of_a_library(have_tools, tmp_path):
    """Two plans linked into one library: both are listed, a name picks
    one, and leaving it out is an error that names them."""
    if not shutil.which("mpicxx"):
        pytest.skip("mpicxx is not installed")
    from reshard import ReshardError, Plan, tools
    from reshard.build import include_dir
    objs = []
    for name, seed in (("first", 7), ("second", 8)):
        layout = write(tmp_path, f"{name}.json", random_layout(seed, ranks=2))
        cpp = tmp_path / f"{name}.cpp"
        tools.run("reshard-compile", [layout, "--backend=mpi", "-o", cpp,
                                      f"--plan-name={name}"])
        objs.append(str(cpp))
    lib = str(tmp_path / "libtwo.so")
    subprocess.run(["mpicxx", "-shared", "-fPIC", "-O1", "-std=c++17",
                    "-Wl,-Bsymbolic", "-I", include_dir()] + objs +
                   ["-o", lib], check=True)
    with pytest.raises(ReshardError, match=r"holds 2 plans \(first, "
                                           r"second\): name one"):
        Plan.load(lib)
    second = Plan.load(lib, "second")
    assert second.name == "second" and second.num_ranks == 2
    for rank in (2**32 + 1, -1, "0", True):
        with pytest.raises(ReshardError, match="rank must be an int"):
            second.local_shape(second.tensors[0], rank, "src")
    assert second.tensors[0] == "t0" and second.backend == "mpi"
    with pytest.raises(ReshardError, match="has no plan 'third'"):
        Plan.load(lib, "third")
    with pytest.raises(ReshardError, match="cannot load"):
        Plan.load(str(tmp_path / "missing.so"))


def test_compile_passes_planning_choices(have_tools, tmp_path):
    """transits=, relay_tree=, relay_tree_max_streams= and receives_ahead=
    reach reshard-compile (a plan of their own in the cache) and bad values
    are refused before anything is built."""
    import reshard
    layout = write(tmp_path, "layout.json", random_layout(9, ranks=2))
    cache = tmp_path / "cache"
    default = reshard.compile(layout, backend="mpi", cache_dir=str(cache))
    chosen = reshard.compile(layout, backend="mpi", cache_dir=str(cache),
                             transits="never", relay_tree="never")
    assert chosen.tensors == default.tensors
    assert len(list(cache.glob("libplan-mpi-*.so"))) == 2
    limited = reshard.compile(layout, backend="mpi", cache_dir=str(cache),
                              relay_tree_max_streams=0)
    assert limited.tensors == default.tensors
    assert len(list(cache.glob("libplan-mpi-*.so"))) == 3
    ahead = reshard.compile(layout, backend="mpi", cache_dir=str(cache),
                            receives_ahead=True)
    assert ahead.tensors == default.tensors
    assert len(list(cache.glob("libplan-mpi-*.so"))) == 4
    for kw, bad in (("transits", "sometimes"), ("relay_tree", "deep")):
        with pytest.raises(reshard.ReshardError, match=f"{kw} must be one "
                                                       f"of .*'{bad}'"):
            reshard.compile(layout, backend="mpi", cache_dir=str(cache),
                            **{kw: bad})
    for bad in (-1, "8", True, 2.5):
        with pytest.raises(reshard.ReshardError,
                           match="relay_tree_max_streams must be a "
                                 "non-negative number of streams"):
            reshard.compile(layout, backend="mpi", cache_dir=str(cache),
                            relay_tree_max_streams=bad)
    for bad in (1, "yes", None):
        with pytest.raises(reshard.ReshardError,
                           match="receives_ahead must be True or False"):
            reshard.compile(layout, backend="mpi", cache_dir=str(cache),
                            receives_ahead=bad)
    assert len(list(cache.glob("libplan-mpi-*.so"))) == 4
    # The staging budget as the CLI takes it: "1M" is 1 << 20 bytes.
    budget = reshard.compile(layout, backend="mpi", cache_dir=str(cache),
                             staging_budget="1M")
    assert reshard.compile(layout, backend="mpi", cache_dir=str(cache),
                           staging_budget=1 << 20).path == budget.path
    for bad in ("1X", "0", -1, True, 1 << 63):
        with pytest.raises(reshard.ReshardError, match="staging_budget"):
            reshard.compile(layout, backend="mpi", cache_dir=str(cache),
                            staging_budget=bad)
    assert len(list(cache.glob("libplan-mpi-*.so"))) == 5


def test_bf16_may_come_as_uint16_words_or_widen(have_tools, tmp_path):
    """numpy has no bf16: a bf16 shard may be given as uint16 words (its
    bits), not as any other 16-bit type. A destination may be an fp32 torch
    tensor (widened), not fp64, not numpy, not for an fp16 tensor (torch
    may quiet its NaNs), and a source may not (that would round)."""
    if not shutil.which("mpicxx"):
        pytest.skip("mpicxx is not installed")
    torch = pytest.importorskip("torch")
    import numpy as np
    import reshard
    mesh = {"shape": [2], "axes": ["x"], "ranks": [0, 1]}
    layout = write(tmp_path, "layout.json", {
        "meshes": {"m": mesh},
        "tensors": [{"name": "w", "shape": [4, 6], "dtype": "bf16",
                     "src": {"mesh": "m", "dims": [["x"], []]},
                     "dst": {"mesh": "m", "dims": [[], ["x"]]}}]})
    plan = reshard.compile(layout, backend="mpi",
                           cache_dir=str(tmp_path / "cache"))
    _, problems = plan._check_side({"w": np.zeros((2, 6), np.uint16)},
                                   "src", 0)
    assert problems == []
    _, problems = plan._check_side({"w": np.zeros((2, 6), np.int16)},
                                   "src", 0)
    assert problems == ["src: 'w' on rank 0: dtype int16, the plan's is "
                        "bf16"], problems
    assert plan._check_side({"w": torch.zeros(4, 3)}, "dst", 0)[1] == []
    spec = json.loads(layout.read_text())
    spec["tensors"][0]["dtype"] = "fp16"
    half = reshard.compile(write(tmp_path, "half.json", spec), backend="mpi",
                           cache_dir=str(tmp_path / "cache"))
    assert half._check_side({"w": torch.zeros(4, 3)}, "dst", 0)[1] == [
        "dst: 'w' on rank 0: dtype fp32, the plan's is fp16"]
    for side, t, got in (
            ("dst", torch.zeros(4, 3, dtype=torch.float64), "fp64"),
            ("dst", np.zeros((4, 3), np.float32), "fp32"),
            ("src", torch.zeros(2, 6), "fp32")):
        _, problems = plan._check_side({"w": t}, side, 0)
        assert problems == [f"{side}: 'w' on rank 0: dtype {got}, the "
                            f"plan's is bf16"], problems


def test_fp32_destinations_of_bf16_tensors_are_widened(mpi, tmp_path):
    """A bf16 tensor's destination may be an fp32 torch tensor (vLLM's
    GLM-4.5 router gate): bf16 crosses, the run widens; a run another rank
    rejects writes nothing; an fp16 tensor beside it runs as before."""
    layout = write(tmp_path, "layout.json", {
        "meshes": {"m": {"shape": [2, 2], "axes": ["x", "y"],
                         "ranks": [0, 1, 2, 3]}},
        "tensors": [
            {"name": "gate", "shape": [6, 10], "dtype": "bf16",
             "src": {"mesh": "m", "dims": [["x"], []]},
             "dst": {"mesh": "m", "dims": [[], ["y"]]}},
            {"name": "half", "shape": [5, 4], "dtype": "fp16",
             "src": {"mesh": "m", "dims": [["x", "y"], []]},
             "dst": {"mesh": "m", "dims": [[], []]}}]})
    lines = mpi(4, "widen", layout)
    assert len(lines) == 4 and all(
        ": ok 0 wrong, fp32 ['gate'], after a rejected run untouched" in l
        for l in lines), "\n".join(lines)


def test_fp8_may_come_as_uint8_bytes(have_tools, tmp_path):
    """numpy has no FP8: an fp8e4m3 or fp8e5m2 shard may be given as uint8
    bytes, not as int8."""
    if not shutil.which("mpicxx"):
        pytest.skip("mpicxx is not installed")
    import numpy as np
    import reshard
    mesh = {"shape": [2], "axes": ["x"], "ranks": [0, 1]}
    tensors = [{"name": name, "shape": [4, 6], "dtype": name,
                "src": {"mesh": "m", "dims": [["x"], []]},
                "dst": {"mesh": "m", "dims": [[], ["x"]]}}
               for name in ("fp8e4m3", "fp8e5m2")]
    layout = write(tmp_path, "layout.json",
                   {"meshes": {"m": mesh}, "tensors": tensors})
    plan = reshard.compile(layout, backend="mpi",
                           cache_dir=str(tmp_path / "cache"))
    shard = np.zeros((2, 6), np.uint8)
    _, problems = plan._check_side({"fp8e4m3": shard, "fp8e5m2": shard},
                                   "src", 0)
    assert problems == []
    _, problems = plan._check_side({"fp8e4m3": shard,
                                    "fp8e5m2": shard.view(np.int8)},
                                   "src", 0)
    assert problems == ["src: 'fp8e5m2' on rank 0: dtype int8, the plan's "
                        "is fp8e5m2"], problems


def test_nccl_plan_compiles_and_loads(have_tools, tmp_path, cli_env):
    """The NCCL library builds with nvcc and answers its queries on a
    machine without a GPU (running it needs one: scripts/gpu-check.sh)."""
    from reshard.build import cuda_home
    if not os.path.exists(os.path.join(cuda_home(), "bin", "nvcc")):
        pytest.skip("no CUDA toolkit")
    import reshard
    layout = write(tmp_path, "layout.json", random_layout(9, ranks=2))
    plan = reshard.compile(layout, backend="nccl",
                           cache_dir=str(tmp_path / "cache"))
    assert plan.backend == "nccl" and plan.num_ranks == 2
    mpi_plan = reshard.compile(layout, backend="mpi",
                               cache_dir=str(tmp_path / "cache"))
    assert plan.tensors == mpi_plan.tensors
    for name in plan.tensors:
        for rank in (0, 1):
            for side in ("src", "dst"):
                assert plan.local_shape(name, rank, side) == \
                    mpi_plan.local_shape(name, rank, side)
    MPI = pytest.importorskip("mpi4py.MPI")
    with pytest.raises(reshard.ReshardError, match="an NCCL plan runs on an "
                                                   "NCCL communicator"):
        plan.run({}, {}, MPI.COMM_SELF)
    # Loaded before torch, the plan must not take libnccl.so.2's name with
    # the CUDA toolkit's NCCL, which torch's wheel may find too old.
    pytest.importorskip("torch")
    probe = ("import sys, reshard\n"
             "reshard.Plan.load(sys.argv[1])\n"
             "assert 'torch' in sys.modules\n"
             "import torch.distributed\n")
    r = subprocess.run([sys.executable, "-c", probe, plan.path],
                       capture_output=True, text=True,
                       env=cli_env)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("config,train,infer", [
    ("gated", "tp=4,ep=2,dp=1", "tp=4,dp=1"),
    ("gated", "tp=4,ep=2,dp=1", "tp=2,dp=2"),
    ("gated", "tp=4,ep=2,dp=1", "tp=2,engines=2,ep=1"),
    ("gated", "tp=4,ep=2,dp=1", "tp=1,pp=2,dp=2,ep=1"),
    ("dsv3", "tp=1,pp=2,vpp=2,ep=2,dp=2",
     "tp=2,pcp=2,ep=1,placement=round_robin"),
    # A pipeline layout: stage 1's second chunk is empty, MLA and experts.
    ("dsv3", "tp=1,pp=2,ep=2,dp=2,layout=Et|t|tt|L", "tp=4,ep=1"),
    ("gated-v200", "tp=4,ep=2,dp=1,vocab_pad=16", "tp=2,dp=2"),
    ("gated", "tp=4,ep=2,dp=1", "tp=1,dp=4,ep=1,redundant=4"),
    # GLM-4.5: an fp32 vLLM gate, shared experts TP-split under vLLM's
    # sequence-parallel MoE.
    ("glm", "tp=2,pp=2,ep=2", "tp=2,dp=2,ep=1"),
    # Qwen3-Next: Gated DeltaNet (in_proj's rows, an fp32 A_log) and gated
    # attention with KV heads replicated on vLLM.
    ("qwen3-next", "tp=2,pp=2,ep=2", "tp=4"),
    ("qwen3.5", "tp=2,ep=2,dp=2", "tp=2,dp=2,ep=1"),  # flat in_proj_qkvz
    # gpt-oss: sinks, biases, the router's fp32 bias on Megatron, each
    # expert's gate_up interleaved in vLLM's w13 (a dim order), w2_bias on
    # FusedMoE's first TP rank or, under EP, on every rank.
    ("gpt-oss", "tp=2,dp=2,ep=2", "tp=4"),
    ("gpt-oss", "tp=4,ep=2", "tp=2,dp=2,ep=1"),
    # A rebalanced map: ranks 0 and 3 each hold an expert twice.
    ("gated", "tp=4,ep=2,dp=1", json.dumps(dict(
        dp=4, ep=True, redundant=4,
        expert_map=[5, 5, 1, 2, 3, 4, 6, 7, 0, 7, 0, 7])))])
def test_refit_through_framework_parameters(mpi, tmp_path, config, train,
                                            infer):
    """Megatron's parameters (stage-local layers, TEGroupedMLP experts,
    linear_qkv of 2 query groups over TP 4; or two virtual pipeline chunks
    a stage, passed as Megatron's list of model chunks) into vLLM's (qkv
    pieces of replicated KV heads, stacked w13_weight / w2_weight; with
    dp=2 experts split over the engine's 4 ranks, with engines=2 the EP
    group in each engine, with pp=2 each stage's layers and EP group; or
    PCP ranks with round-robin experts; or a vocab both pad, in pieces;
    or EPLB's redundant experts, copies in several ranks' stacks),
    mapped by
    megatron_tensors / vllm_tensors: every destination element through the
    views, verify=True, and no byte of vLLM's parameters outside them (the
    padding) written."""
    path = tmp_path / f"{config}.json"
    path.write_text(json.dumps(
        GATED if config == "gated" else
        dict(GATED, vocab_size=200) if config == "gated-v200" else
        TINY_GLM if config == "glm" else
        TINY_QWEN3_NEXT if config == "qwen3-next" else
        TINY_QWEN3_5 if config == "qwen3.5" else
        GPT_OSS if config == "gpt-oss" else
        dict(TINY_DSV3, num_hidden_layers=4)))
    lines = mpi(4, "refit", path, train, infer, 4 if config == "dsv3" else 2,
                tmp_path)
    assert len(lines) == 4 and all(
        ": ok " in l and " 0 wrong, 0 unmapped, 0 written outside them" in l
        for l in lines), "\n".join(lines)


def need_megatron_core():
    try:
        import megatron.core  # noqa: F401
    except Exception as e:
        pytest.skip(f"megatron-core not importable ({e}); "
                    f"bench/setup-bench.sh installs it")


@pytest.mark.parametrize("train,infer", [
    ("tp=2,ep=2,dp=2", "tp=2,dp=2,ep=1,w13=up_gate,fp8=block"),
    ("tp=2,ep=1,etp=2,dp=2", "tp=2,engines=2,w13=up_gate,fp8=block"),
    ("tp=2,ep=2,dp=2", json.dumps(dict(
        dp=4, ep=True, redundant=4, expert_map=[1, 1, 0, 2, 3, 0, 2, 3],
        w13="up_gate", fp8="block")))])
def test_fp8_refit_into_flashinfer_experts(mpi, tmp_path, train, infer,
                                           source="fake"):
    """fp8=block with vLLM's FlashInfer experts (w13=up_gate: [up; gate]
    in each w13): Megatron's bf16 parameters into vLLM's FP8 ones and
    their weight_scale_inv, through the name mapping, verify=True; every
    view bit for bit against torch's float8 casts, and every expert's
    w13_weight[j] / w13_weight_scale_inv[j] whole as FlashInfer holds it
    (under EP, FusedMoE's TP, and EPLB with two copies on one rank)."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps(FP8_MOE))
    lines = mpi(4, "refit-fp8", path, train, infer, 2, tmp_path, source)
    assert len(lines) == 4 and all(
        ": ok " in l and " 0 wrong, 0 unmapped" in l and
        " 0 experts' " not in l for l in lines), "\n".join(lines)


def test_fp8_refit_into_flashinfer_experts_from_megatron_core(mpi,
                                                              tmp_path):
    """As above, from Megatron-Core's own GPTModel of each rank
    (SequentialMLP experts split over expert TP 2: the gate and up pieces
    are rows [0, f/2) and [f/2, f) of each local expert's linear_fc1)."""
    need_megatron_core()
    test_fp8_refit_into_flashinfer_experts(
        mpi, tmp_path, "tp=2,dp=2,ep=2,etp=2",
        "tp=4,ep=1,w13=up_gate,fp8=block", "megatron-core")


MEGATRON_CORE_CONFIGS = {
    "moe": dict(GATED, attn_output_gate=False),
    "gated": GATED,
    "moe-v200": dict(GATED, attn_output_gate=False, vocab_size=200,
                     num_hidden_layers=4),
    "dense-tied": dict(model_type="qwen3", num_hidden_layers=2,
                       hidden_size=64, num_attention_heads=8,
                       num_key_value_heads=2, head_dim=8,
                       intermediate_size=64, vocab_size=200,
                       tie_word_embeddings=True, torch_dtype="bfloat16"),
    "glm": TINY_GLM,
    "gpt-oss": GPT_OSS,
}


@pytest.mark.parametrize("config,train,infer", [
    ("moe", "tp=4,ep=2", "tp=2,dp=2"),          # 2 query groups over tp 4
    ("moe", "tp=2,dp=2,ep=2,etp=2", "tp=4,ep=1"),   # expert TP
    ("gated", "tp=2,pp=2,ep=2", "tp=4"),        # attention output gate
    ("moe-v200", "tp=2,pp=2,vpp=2,vocab_pad=16", "tp=4,ep=1"),
    # A pipeline layout: stage 1's second chunk holds no layer, only the
    # final norm and the output layer.
    ("moe-v200", "tp=2,pp=2,vocab_pad=16,layout=Et|tt|t|L", "tp=4,ep=1"),
    # (Megatron ties across stages only on a GPU: the embedding group's
    # copy goes to CUDA in setup_embeddings_and_output_layer.)
    ("dense-tied", "tp=2,dp=2,vocab_pad=64", "tp=2,pp=2"),
    ("glm", "tp=2,pp=2,ep=2", "tp=2,dp=2,ep=1"),    # GLM-4.5, fp32 gate
    # gpt-oss: softmax_offset, biases everywhere (the router's too),
    # SequentialMLP experts' linear_fc1 [gate; up] into vLLM's interleave
    # (Megatron-Core refuses MoE biases with etp > 1).
    ("gpt-oss", "tp=2,dp=2,ep=2", "tp=4")])
def test_refit_through_megatron_core_model(mpi, tmp_path, config, train,
                                           infer):
    """As above, but from Megatron-Core's own GPTModel of each rank
    (megatron_model.py: local specs, SequentialMLP experts, expert TP,
    model chunks, a padded vocab, tied embeddings), not a rendering of its
    conventions:
    megatron_tensors must map every layout tensor onto the parameters
    Megatron built, and use all of them."""
    need_megatron_core()
    path = tmp_path / f"{config}.json"
    cfg = MEGATRON_CORE_CONFIGS[config]
    path.write_text(json.dumps(cfg))
    lines = mpi(4, "refit", path, train, infer, cfg["num_hidden_layers"],
                tmp_path, "megatron-core")
    assert len(lines) == 4 and all(
        l.endswith("Megatron unused: []") for l in lines), "\n".join(lines)
    assert all(
        ": ok " in l and " 0 wrong, 0 unmapped, 0 written outside them" in l
        for l in lines), "\n".join(lines)


def test_quantized_destinations_match_torch(mpi, tmp_path):
    """FP8 block scaling and MXFP8 from bf16, fp16 and fp32 sources
    (storage orders, fused blocks, colocated ranks, uneven last blocks),
    quantized on the senders by the plan and checked bit for bit against
    torch's float8_e4m3fn casts under docs/Layout.md's arithmetic, with
    verify=True."""
    root = os.path.dirname(os.path.dirname(HERE))
    layout = os.path.join(root, "test", "Integration", "mpi", "Inputs",
                          "quant.json")
    assert_all_ok(mpi(8, "quant", layout), 8)


def test_nccl_comm_passes_the_unique_id_by_value(tmp_path):
    """ncclCommInitRank takes its 128-byte id by value (on the stack under
    the SysV ABI) and the rank after it: a stand-in with its signature
    checks what NcclComm's call delivers (a GPU is not needed for that)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    src = tmp_path / "init.c"
    src.write_text(
        "typedef struct { char internal[128]; } ncclUniqueId;\n"
        "int ncclCommInitRank(void **comm, int n, ncclUniqueId id, int r) {\n"
        "  for (int i = 0; i < 128; ++i)\n"
        "    if (id.internal[i] != (char)(i * 7 + 1)) return 100 + i;\n"
        "  *comm = (void *)(long)(1000 * n + r);\n"
        "  return 0;\n"
        "}\n")
    lib = tmp_path / "libinit.so"
    subprocess.run([cc, "-shared", "-fPIC", str(src), "-o", str(lib)],
                   check=True)
    import ctypes
    from reshard.comms import _init_rank
    uid = bytes((i * 7 + 1) % 256 for i in range(128))
    rc, comm = _init_rank(ctypes.CDLL(str(lib)).ncclCommInitRank, 4, uid, 3)
    assert (rc, comm.value) == (0, 4003)


def test_digests_refuse_a_missing_quantized_source(mpi, tmp_path):
    """P_digests re-quantizes a sender's FP8 payload from its source shard:
    without that shard it refuses (it used to digest zeros)."""
    import numpy
    import reshard
    from reshard import ReshardError, buffers
    from reshard.dtypes import DTYPE_BYTES
    example = os.path.join(HERE, "..", "..", "examples", "tp4-to-tp2-fp8.json")
    plan = reshard.compile(example, backend="mpi", cache_dir=str(tmp_path))

    def shards(rank, side):
        out = []
        for name in plan.tensors:
            shape = plan.local_shape(name, rank, side)
            dtype = plan.dtype(name, side)
            n = 1
            for s in shape or ():
                n *= s
            out.append(buffers.describe(numpy.zeros(n * DTYPE_BYTES[dtype],
                                                    numpy.uint8))
                       if shape and n else None)
        return out

    # down_proj is quantized on its senders (the example's comment): every
    # rank holding a source shard of it sends from it.
    name = "model.layers.0.mlp.down_proj.weight"
    t = plan.tensors.index(name)
    refused = 0
    for rank in range(plan.num_ranks):
        src, dst = shards(rank, "src"), shards(rank, "dst")
        ws = numpy.zeros(max(1, plan._c["workspace_bytes"](rank)), numpy.uint8)
        plan.digests(rank, src, dst, ws)  # every shard there: digests
        if src[t] is not None:
            without = list(src)
            without[t] = None
            with pytest.raises(ReshardError, match=r"failed \(-2\)"):
                plan.digests(rank, without, dst, ws)
            refused += 1
    assert refused > 0


def test_wrong_kinds_of_arguments_are_named(mpi, tmp_path):
    """One rank on MPI.COMM_SELF: arguments of the wrong kind get a
    ReshardError, never a segfault (an MPI.Group's handle is no
    communicator), a TypeError or bytes read in the wrong order."""
    import numpy as np
    import torch
    import reshard
    from mpi4py import MPI
    from reshard import ReshardError
    m = {"shape": [1], "axes": ["x"], "ranks": [0]}
    layout = write(tmp_path, "one.json", {"meshes": {"m": m}, "tensors": [
        {"name": "a", "shape": [4, 6], "dtype": "fp32",
         "src": {"mesh": "m", "dims": [[], []]},
         "dst": {"mesh": "m", "dims": [[], []]}}]})
    cache = str(tmp_path / "cache")
    plan = reshard.compile(layout, backend="mpi", cache_dir=cache)
    src = {"a": torch.arange(24.).reshape(4, 6)}
    for comm in (MPI.COMM_SELF.Get_group(), MPI.INT, MPI.SUM):
        with pytest.raises(ReshardError, match="an MPI plan runs on an "
                                               "mpi4py communicator"):
            plan.run(src, {"a": torch.zeros(4, 6)}, comm)
    for verify in ("false", [], 1):
        with pytest.raises(ReshardError, match="verify must be True or "
                                               "False"):
            plan.run(src, {"a": torch.zeros(4, 6)}, MPI.COMM_SELF,
                     verify=verify)
    big = np.zeros((4, 6), ">f4")
    with pytest.raises(ReshardError, match="byte order '>' is not this "
                                           "machine's"):
        plan.run(src, {"a": big}, MPI.COMM_SELF)
    assert not big.any()
    with pytest.raises(ReshardError, match="negated or conjugated view"):
        plan.run({"a": torch._neg_view(src["a"])}, {"a": torch.zeros(4, 6)},
                 MPI.COMM_SELF)
    view = memoryview(bytearray(192)).cast("B").cast("f", (8, 6))[::2]
    with pytest.raises(ReshardError, match="not contiguous"):
        plan.run(src, {"a": view}, MPI.COMM_SELF)
    for bad in (["a"], {}):
        with pytest.raises(ReshardError, match="has no tensor"):
            plan.local_shape(bad, 0, "src")
    assert plan.local_shape("a", np.int64(0), "src") == (4, 6)
    with pytest.raises(ReshardError, match="rank must be an int"):
        plan.host_workspace([0])
    with pytest.raises(ReshardError, match="digests: src must list a "
                                           "Buffer"):
        plan.digests(0, [src["a"]], [None])
    with pytest.raises(ReshardError, match="digests: src must list"):
        plan.digests(0, [], [None])
    out = {"a": torch.zeros(4, 6)}
    plan.run(src, out, MPI.COMM_SELF, verify=np.True_)
    assert torch.equal(out["a"], src["a"])
    (tmp_path / "file").write_text("")
    for cache_dir, msg in ((str(tmp_path / "file"), "cannot create it"),
                           (123, "give a folder path")):
        with pytest.raises(ReshardError, match=msg):
            reshard.compile(layout, backend="mpi", cache_dir=cache_dir)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ReshardError, match="not UTF-8 text"):
        reshard.compile(str(bad), backend="mpi", cache_dir=cache)
    bad.write_text('{"meshes": {}}')     # named as given, not the copy
    with pytest.raises(ReshardError, match=re.escape(str(bad)) + ":1:1: "
                       "error: .*missing required field 'tensors'"):
        reshard.compile(str(bad), backend="mpi", cache_dir=cache)


def test_what_is_no_torch_process_group_is_refused_for_nccl():
    pytest.importorskip("torch")
    from reshard import ReshardError, comms
    for bogus in (None, "x", 1.5, object()):
        with pytest.raises(ReshardError, match="an NCCL plan runs on an "
                                               "ncclComm_t handle"):
            comms.wrap(bogus, "nccl")
