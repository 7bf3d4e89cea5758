"""Shared by the benchmark scripts: running a tool with its wall time, CPU
time and peak memory (GNU time), the pass times of -mlir-timing, and writing
a refit scenario's layout."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

LOCK = "/tmp/reshard-build.lock"


def die(msg):
    sys.exit("%s: %s" % (os.path.basename(sys.argv[0]), msg))


def run(cmd, label, lock=False):
    """Runs cmd; returns (wall s, peak RSS MiB, stdout, stderr, CPU s = user +
    system, less sensitive than wall time to other jobs on the cores)."""
    gnu_time = os.path.exists("/usr/bin/time")
    with tempfile.NamedTemporaryFile("r") as tf:
        full = list(cmd)
        if gnu_time:
            full = ["/usr/bin/time", "-f", "%M %U %S", "-o", tf.name] + full
        if lock and shutil.which("flock"):
            # Heavy compiles never overlap with builds or other benchmarks.
            full = ["flock", LOCK] + full
        start = time.perf_counter()
        r = subprocess.run(full, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if r.returncode:
            die("%s failed (%d): %s\n%s" % (label, r.returncode, " ".join(cmd),
                                             r.stderr[-3000:]))
        fields = tf.read().split()[-3:] if gnu_time else ["nan"] * 3
        rss, cpu = float(fields[0]) / 1024, float(fields[1]) + float(fields[2])
    return wall, rss, r.stdout, r.stderr, cpu


def pass_times(timing_text):
    """Pass name -> wall seconds from -mlir-timing output."""
    out = {}
    for m in re.finditer(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S.*?)\s*$", timing_text, re.M):
        out[m.group(2)] = out.get(m.group(2), 0) + float(m.group(1))
    return out


def make_scenario(name, layers, scale_down, out):
    """Writes scenario `name` (make_refit_scenario.py) as layout JSON."""
    here = os.path.dirname(os.path.abspath(__file__))
    gen = [sys.executable, os.path.join(here, "make_refit_scenario.py"),
           "--scenario", name, "--out", out]
    if layers is not None:
        gen += ["--layers", str(layers)]
    if scale_down is not None:
        gen += ["--scale-down", str(scale_down)]
    run(gen, "make_refit_scenario")
