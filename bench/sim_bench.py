#!/usr/bin/env python3
"""Compile-time and simulated refit-time benchmark of whole-model refit plans.

For each scenario (bench/make_refit_scenario.py): generates the layout, runs
every compiler stage as its own process (import JSON -> .mlir, intersect,
route = select-sources, schedule, lower = convert-reshard-to-runtime,
translate to C++) timing wall clock and peak RSS, times the same compile in
the fewest processes (import; plan + lower; translate), compiles the
generated C++ with g++ -O2 -c, then replays the lowered per-rank programs in
a flow-level SimGrid simulation of the cluster (bench/simgrid/refit_sim.cpp)
for reshard's plan, the `direct` plan and the gather-broadcast baseline
(bench/simgrid/gather_broadcast.py), next to the cost model's estimate and
lower bound (`--reshard-report=format=json`). Prints Markdown tables.

  python3 bench/sim_bench.py                          # the 6 bundled scenarios
  python3 bench/sim_bench.py --scenario deepseek-v3-dgx [--layers N --scale-down F]
  python3 bench/sim_bench.py --smoke                  # small, for the test suite
  options: --backends mpi,nccl  --no-cxx  --staging-budget BYTES  --json FILE
           --copies nvlink|ignore  --keep DIR  --build DIR
           --simulator simgrid|fluid

Needs libsimgrid-dev (scripts/setup.sh installs it) unless --simulator fluid
(bench/replay/refit_fluid.cpp: the same model on its own max-min solver). Every figure is
measured in this run; see bench/Simulation.md for what is modelled.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "simgrid"))
import gather_broadcast  # noqa: E402
from timing import die, make_scenario, pass_times, run  # noqa: E402

SCENARIOS = ["llama70b-dgx", "qwen235b-dgx", "deepseek-v3-dgx",
             "llama70b-gb200", "qwen235b-gb200", "deepseek-v3-gb200"]
SMOKE = dict(scenario="qwen235b-dgx", layers=2, scale_down=64)
SIMULATORS = {
    # name: (source, needs SimGrid); both print the same JSON line
    "simgrid": ("simgrid/refit_sim.cpp", True),
    "fluid": ("replay/refit_fluid.cpp", False),
}


def build_simulator(build, simulator="simgrid"):
    """Compiles the replay program (bench/simgrid/refit_sim.cpp on SimGrid,
    or bench/replay/refit_fluid.cpp, the same model on its own solver) into
    BUILD/bench/ where it is missing or older than its sources."""
    source, needs_simgrid = SIMULATORS[simulator]
    src = os.path.join(HERE, source)
    header = os.path.join(HERE, "replay", "flow_list.h")
    exe = os.path.join(build, "bench", os.path.basename(src)[:-len(".cpp")])
    if needs_simgrid and not os.path.exists("/usr/include/simgrid/s4u.hpp"):
        die("SimGrid headers missing: run scripts/setup.sh "
            "(it installs libsimgrid-dev), or replay with --simulator fluid")
    newest = max(os.path.getmtime(src), os.path.getmtime(header))
    if not os.path.exists(exe) or os.path.getmtime(exe) < newest:
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        tmp = exe + ".tmp%d" % os.getpid()
        run(["g++", "-O2", "-std=c++17", src, "-o", tmp] +
            (["-lsimgrid"] if needs_simgrid else []),
            "compiling " + os.path.basename(exe))
        os.replace(tmp, exe)
    return exe


def simulate(sim, topo, path, name, copies, receives_ahead=False, quantum=0):
    t = "%d,%d,%g,%g,%g,%g" % (topo["gpus_per_node"], topo["nvl_domain_size"],
                              topo["nic_GBps_per_gpu"], topo["nvlink_GBps_per_gpu"],
                              topo["nic_latency_us"], topo["nvlink_latency_us"])
    cmd = [sim, "--topology", t, "--name", name, "--copies", copies, path]
    if receives_ahead:
        cmd.append("--receives-ahead")
    if quantum:
        cmd += ["--quantum", "%g" % quantum]
    wall, rss, out, _, _ = run(cmd, "%s %s" % (os.path.basename(sim), name))
    r = json.loads(out.strip().splitlines()[-1])
    r["sim_wall_seconds"], r["sim_peak_mib"] = wall, rss
    return r


def replay_plan(build, mlir, report, name, backend="nccl",
                simulators=("simgrid",), quantum=0):
    """Replays the lowered plan MLIR (whose report is REPORT) in each of
    SIMULATORS as BACKEND runs it (mpi: the next step's receives posted
    ahead where the plan says receives_ahead; the fluid replay with
    completions on a grid of QUANTUM seconds where it is not 0) and
    removes it; returns the first replay's figures with its wall time and
    peak memory, and the others' under their names. Dies where a replay moves other network
    bytes than the report counts or beats the physical bound, or where two
    replays disagree by more than 1e-6 of the time."""
    flows = mlir + ".flows"
    with open(mlir) as f:
        ahead = backend == "mpi" and any(
            l.lstrip().startswith("reshard_rt.plan ") and
            " receives_ahead " in l for l in f)
    run([os.path.join(build, "bin", "reshard-translate"), "--reshard-to-flows",
         mlir, "-o", flows], "flows of " + name)
    sims = [simulate(build_simulator(build, x), report["topology"], flows,
                     name, "nvlink", receives_ahead=ahead,
                     quantum=quantum if x == "fluid" else 0)
            for x in simulators]
    first = sims[0]["simulated_seconds"]
    for x, sim in zip(simulators, sims):
        if sim["network_bytes"] != report["network_bytes"]:
            die("%s: the %s replay moves %d network bytes, the report counts %d"
                % (name, x, sim["network_bytes"], report["network_bytes"]))
        # Latency only adds to a replay, so none may beat the physical bound.
        if sim["simulated_seconds"] < 0.999 * report["lower_bound_seconds"]:
            die("%s: %s simulated %.6f s below the bound %.6f s"
                % (name, x, sim["simulated_seconds"],
                   report["lower_bound_seconds"]))
        if abs(sim["simulated_seconds"] - first) > 1e-6 * first:
            die("%s: %s simulated %.9f s, %s %.9f s"
                % (name, x, sim["simulated_seconds"], simulators[0], first))
    sim = dict(sims[0], simulator=simulators[0])
    for x, other in zip(simulators[1:], sims[1:]):
        sim[x] = other
    for path in (mlir, flows):
        os.remove(path)
    return sim


def bench_scenario(a, name, layers, scale_down, tmp, sim):
    opt = os.path.join(a.build, "bin", "reshard-opt")
    tr = os.path.join(a.build, "bin", "reshard-translate")
    comp = os.path.join(a.build, "bin", "reshard-compile")
    f = lambda x: os.path.join(tmp, x)  # noqa: E731
    make_scenario(name, layers, scale_down, f("layout.json"))
    budget = a.staging_budget
    row = {"scenario": name, "layers": layers, "scale_down": scale_down,
           "staging_budget": budget, "stages": {}}
    st = row["stages"]

    def stage(key, cmd, timed_pass=None, lock=False):
        wall, rss, _, err, cpu = run(cmd, key, lock)
        st[key] = {"wall": wall, "peak_mib": rss, "cpu": cpu}
        if timed_pass:
            st[key]["pass"] = pass_times(err).get(timed_pass)

    # Stage by stage, one process each (each parses its input and prints its
    # output; -mlir-timing gives the pass's own share).
    stage("import", [tr, "--import-layout-json", f("layout.json"), "-o", f("s0.mlir")])
    stage("intersect", [opt, f("s0.mlir"), "--reshard-intersect", "-mlir-timing",
                        "-o", f("s1.mlir")], "ReshardIntersect")
    stage("route", [opt, f("s1.mlir"), "--reshard-select-sources", "-mlir-timing",
                    "-o", f("s2.mlir")], "ReshardSelectSources")
    stage("schedule", [opt, f("s2.mlir"), "--reshard-schedule=staging-budget=%d" % budget,
                       "-mlir-timing", "-o", f("s3.mlir")], "ReshardSchedule")
    stage("lower", [opt, f("s3.mlir"), "--convert-reshard-to-runtime=plan-name=refit",
                    "-mlir-timing", "-o", f("plan.mlir")], "ConvertReshardToRuntime")
    for be in a.backends:
        stage("translate-" + be, [tr, "--reshard-to-cpp", "--backend=" + be,
                                  f("plan.mlir"), "-o", f("plan-%s.cpp" % be)])
    # The same compile in the fewest processes: import, plan + lower, translate.
    stage("plan+lower", [opt, f("s0.mlir"), "--reshard-plan-pipeline="
                         "staging-budget=%d plan-name=refit" % budget,
                         "-o", f("plan1.mlir")])
    # And in one command: reshard-compile imports, plans, lowers and emits in
    # one process (its default staging budget, 1 GiB, so a plan with fewer
    # steps than the one simulated below).
    stage("one-command", [comp, f("layout.json"), "--backend=" + a.backends[0],
                          "-o", f("plan-1cmd.cpp")])
    e2e = ["import", "plan+lower", "translate-" + a.backends[0]]
    row["import_to_cpp"] = {"backend": a.backends[0],
                            "wall": sum(st[k]["wall"] for k in e2e),
                            "cpu": sum(st[k]["cpu"] for k in e2e),
                            "peak_mib": max(st[k]["peak_mib"] for k in e2e)}
    row["sizes"] = {"layout.json": os.path.getsize(f("layout.json")),
                    "plan.mlir": os.path.getsize(f("plan.mlir")),
                    "plan-%s.cpp" % a.backends[0]: os.path.getsize(f("plan-%s.cpp" % a.backends[0]))}
    if not a.no_cxx:
        inc = ["-I" + os.path.join(ROOT, "include")]
        for be in a.backends:
            flags = list(inc)
            if be == "mpi":
                flags += subprocess.run(["mpicxx", "--showme:compile"], capture_output=True,
                                        text=True).stdout.split()
            elif os.path.isdir("/usr/local/cuda/include"):
                flags += ["-I/usr/local/cuda/include"]
            else:
                continue
            stage("g++-" + be, ["g++", "-O2", "-std=c++17"] + flags +
                  ["-c", f("plan-%s.cpp" % be), "-o", f("plan-%s.o" % be)], lock=True)
            row["sizes"]["plan-%s.o" % be] = os.path.getsize(f("plan-%s.o" % be))

    # Cost model figures of the plan and of the `direct` plan, as scheduled.
    run([opt, f("s3.mlir"), "--reshard-report=format=json per-rank=false output=%s"
         % f("report.json"), "-o", os.devnull], "report")
    run([opt, f("s0.mlir"), "--pass-pipeline=builtin.module("
         "reshard-plan-pipeline{strategy=direct staging-budget=%d lower=false},"
         "reshard-report{format=json per-rank=false output=%s},"
         "convert-reshard-to-runtime{plan-name=direct})" % (budget, f("report-direct.json")),
         "-o", f("direct.mlir")], "direct plan")
    # The messages the engine sends, for the simulator.
    for plan in ("plan", "direct"):
        run([tr, "--reshard-to-flows", f(plan + ".mlir"), "-o", f(plan + ".flows")],
            "flows of " + plan)
    rep = json.load(open(f("report.json")))
    rep_direct = json.load(open(f("report-direct.json")))
    topo = rep["topology"]
    if not topo["present"]:
        die("the layout has no topology")
    row["topology"] = topo
    row["report"] = {k: rep[k] for k in ("tensors", "pieces", "network_bytes",
                                         "lower_bound_network_bytes", "estimated_seconds",
                                         "lower_bound_seconds")}
    row["report"]["steps"] = rep["plan"]["steps"]
    gb = rep["baselines"]["gather-broadcast"]
    row["report"]["gather_broadcast_estimated_seconds"] = gb["estimated_seconds"]
    row["report"]["gather_broadcast_network_bytes"] = gb["network_bytes"]
    row["report"]["direct_one_step_estimated_seconds"] = \
        rep["baselines"]["direct"]["estimated_seconds"]
    row["report"]["direct_estimated_seconds"] = rep_direct["estimated_seconds"]
    row["report"]["direct_steps"] = rep_direct["plan"]["steps"]

    t0 = time.perf_counter()
    for model in ("ring", "ring-seq", "p2p"):
        gather_broadcast.write_flows(f("layout.json"), model, f("gb-%s.flows" % model))
    row["gb_flows_seconds"] = time.perf_counter() - t0
    row["sim"] = {
        "reshard": simulate(sim, topo, f("plan.flows"), "reshard", a.copies),
        "direct": simulate(sim, topo, f("direct.flows"), "direct", a.copies),
        "gb-ring": simulate(sim, topo, f("gb-ring.flows"), "gb-ring", a.copies),
        "gb-ring-seq": simulate(sim, topo, f("gb-ring-seq.flows"), "gb-ring-seq", a.copies),
        "gb-p2p": simulate(sim, topo, f("gb-p2p.flows"), "gb-p2p", a.copies),
    }
    # Invariants, not timings of this machine: the replay moves exactly the
    # bytes the report counts, and no plan beats the lower bound.
    s, r = row["sim"], row["report"]
    lb = r["lower_bound_seconds"]
    checks = [
        ("reshard network bytes = report", s["reshard"]["network_bytes"] == r["network_bytes"]),
        ("direct network bytes = report", s["direct"]["network_bytes"] == rep_direct["network_bytes"]),
        ("gb-p2p network bytes = report", s["gb-p2p"]["network_bytes"] == r["gather_broadcast_network_bytes"]),
        ("reshard network bytes = lower bound", r["network_bytes"] == r["lower_bound_network_bytes"]),
    ] + [("%s sim >= 0.99 x lower bound" % k, s[k]["simulated_seconds"] >= 0.99 * lb)
         for k in ("reshard", "direct", "gb-ring", "gb-ring-seq", "gb-p2p")]
    row["checks"] = [(c, bool(ok)) for c, ok in checks]
    return row


def fmt_stage(x):
    if x is None:
        return "—"
    return "%.2f s (%.2f) / %.0f MiB" % (x["wall"], x["cpu"], x["peak_mib"])


def print_tables(rows, a):
    be = a.backends[0]
    print("### Compile: wall time (CPU time) / peak RSS per stage (one process per stage)\n")
    cols = ["import", "intersect", "route", "schedule", "lower", "translate-" + be]
    if not a.no_cxx:
        cols.append("g++-" + be)
    print("| scenario | " + " | ".join(c.replace("-" + be, " (%s)" % be) for c in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for x in rows:
        print("| %s | %s |" % (label(x), " | ".join(fmt_stage(x["stages"].get(c)) for c in cols)))
    print("\nPass time alone (-mlir-timing, without parsing and printing): ")
    for x in rows:
        st = x["stages"]
        print("- %s: intersect %.2f s, route %.2f s, schedule %.2f s, lower %.2f s"
              % (label(x), st["intersect"]["pass"] or 0, st["route"]["pass"] or 0,
                 st["schedule"]["pass"] or 0, st["lower"]["pass"] or 0))
    print("\n### Compile: import -> C++ (%s) in three processes "
          "(import; plan + lower; translate)\n" % be)
    extra = [k for k in ("translate-nccl", "g++-nccl") if k in rows[0]["stages"] and be != "nccl"]
    print("| scenario | import | plan + lower | translate | total | total CPU | peak | plan.mlir "
          "| C++ | one command: import + translate | its CPU | its peak |"
          + "".join(" %s |" % k for k in extra))
    print("|---" * (12 + len(extra)) + "|")
    for x in rows:
        st, sz = x["stages"], x["sizes"]
        one = st["one-command"]
        print("| %s | %.2f s | %.2f s | %.2f s | **%.2f s** | %.2f s | %.0f MiB | %.0f MB | %.0f MB "
              "| **%.2f s** | %.2f s | %.0f MiB |%s"
              % (label(x), st["import"]["wall"], st["plan+lower"]["wall"],
                 st["translate-" + be]["wall"], x["import_to_cpp"]["wall"],
                 x["import_to_cpp"]["cpu"],
                 x["import_to_cpp"]["peak_mib"], sz["plan.mlir"] / 1e6,
                 sz["plan-%s.cpp" % be] / 1e6, st["import"]["wall"] + one["wall"],
                 st["import"]["cpu"] + one["cpu"], max(st["import"]["peak_mib"], one["peak_mib"]),
                 "".join(" %s |" % fmt_stage(st.get(k)) for k in extra)))
    print("\n### Simulated refit time (%s, flow level; seconds)\n" % (
        "SimGrid" if a.simulator == "simgrid" else "fluid replay"))
    print("| scenario | steps | sim | est. | LB | sim / LB | est. / LB | direct sim (est.) "
          "| G+B ring, all at once | G+B ring, in order | G+B p2p sim (report est.) | x direct | "
          "x G+B ring all | x G+B ring in order | x G+B p2p |")
    print("|---" * 15 + "|")
    for x in rows:
        s, r = x["sim"], x["report"]
        t = s["reshard"]["simulated_seconds"]
        print("| %s | %d | %s | %s | %s | %.3f | %.3f | %s (%s) | %s | %s | %s (%s) "
              "| %.2f | %.2f | %.2f | %.2f |"
              % (label(x), r["steps"], sec(t), sec(r["estimated_seconds"]),
                 sec(r["lower_bound_seconds"]), t / r["lower_bound_seconds"],
                 r["estimated_seconds"] / r["lower_bound_seconds"],
                 sec(s["direct"]["simulated_seconds"]), sec(r["direct_estimated_seconds"]),
                 sec(s["gb-ring"]["simulated_seconds"]),
                 sec(s["gb-ring-seq"]["simulated_seconds"]), sec(s["gb-p2p"]["simulated_seconds"]),
                 sec(r["gather_broadcast_estimated_seconds"]),
                 s["direct"]["simulated_seconds"] / t, s["gb-ring"]["simulated_seconds"] / t,
                 s["gb-ring-seq"]["simulated_seconds"] / t, s["gb-p2p"]["simulated_seconds"] / t))
    print("\nSimulator cost on this machine (replay of the lowered plan):")
    for x in rows:
        s = x["sim"]["reshard"]
        print("- %s: %d messages over %d ranks, %.1f s, %.0f MiB; all five simulations %.1f s"
              % (label(x), s["messages"], s["ranks"], s["sim_wall_seconds"], s["sim_peak_mib"],
                 sum(v["sim_wall_seconds"] for v in x["sim"].values())))
    print("\nChecks:")
    for x in rows:
        for c, ok in x["checks"]:
            print("- %s: %s: %s" % (label(x), c, "ok" if ok else "FAIL"))


def sec(x):
    return "%.3f" % x if x >= 0.01 else "%.3g" % x


def label(x):
    s = x["scenario"]
    if x["layers"] is not None:
        s += " L%d" % x["layers"]
    if x["scale_down"] is not None:
        s += " /%d" % x["scale_down"]
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.environ.get("RESHARD_BUILD", os.path.join(ROOT, "build")))
    ap.add_argument("--scenario", "--scenarios", dest="scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--layers", type=int)
    ap.add_argument("--scale-down", type=int)
    ap.add_argument("--smoke", action="store_true",
                    help="%(scenario)s --layers %(layers)d --scale-down %(scale_down)d" % SMOKE)
    ap.add_argument("--backends", default="mpi", help="mpi, nccl or mpi,nccl")
    ap.add_argument("--no-cxx", action="store_true", help="skip g++ -O2 -c")
    ap.add_argument("--staging-budget", type=int, default=256 << 20)
    ap.add_argument("--copies", default="nvlink", choices=["nvlink", "ignore"])
    ap.add_argument("--json", help="also write every figure here")
    ap.add_argument("--keep", help="keep intermediate files under this directory")
    ap.add_argument("--simulator", choices=sorted(SIMULATORS), default="simgrid",
                    help="the replay: SimGrid (refit_sim) or the same model on "
                    "its own solver (refit_fluid, bench/Simulation.md)")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    if a.smoke:
        a.scenarios, a.layers, a.scale_down = SMOKE["scenario"], SMOKE["layers"], SMOKE["scale_down"]
    a.backends = a.backends.split(",")
    for t in ("reshard-compile", "reshard-opt", "reshard-translate"):
        if not os.access(os.path.join(a.build, "bin", t), os.X_OK):
            die("%s/bin/%s not found; build first or pass --build" % (a.build, t))
    sim = build_simulator(a.build, a.simulator)
    rows = []
    start = time.perf_counter()
    for name in a.scenarios.split(","):
        if a.keep:
            tmp = os.path.join(a.keep, name)
            os.makedirs(tmp, exist_ok=True)
            rows.append(bench_scenario(a, name, a.layers, a.scale_down, tmp, sim))
        else:
            with tempfile.TemporaryDirectory() as tmp:
                rows.append(bench_scenario(a, name, a.layers, a.scale_down, tmp, sim))
        print("sim_bench: %s done (%.0f s so far)" % (name, time.perf_counter() - start),
              file=sys.stderr, flush=True)
    print_tables(rows, a)
    print("\nbenchmark wall time %.0f s" % (time.perf_counter() - start))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    if not all(ok for x in rows for _, ok in x["checks"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
