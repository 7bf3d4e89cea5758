"""Finds and runs the reshard tools (reshard-compile, reshard-opt,
reshard-translate, reshard-run); a failure becomes a ReshardError carrying
the tool's message.
"""
import os
import shutil
import subprocess

from .errors import ReshardError

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def tool(name):
    """Path of a tool: $RESHARD_BIN, then $RESHARD_BUILD/bin, then the
    source tree's build/bin, then PATH."""
    dirs = []
    if os.environ.get("RESHARD_BIN"):
        dirs.append(os.environ["RESHARD_BIN"])
    if os.environ.get("RESHARD_BUILD"):
        dirs.append(os.path.join(os.environ["RESHARD_BUILD"], "bin"))
    dirs.append(os.path.join(_REPO, "build", "bin"))
    for d in dirs:
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    found = shutil.which(name)
    if found:
        return found
    raise ReshardError(f"cannot find {name} (looked in {', '.join(dirs)} and "
                       f"PATH): set RESHARD_BIN to the folder that holds it, "
                       f"or build it with ./scripts/build.sh")


def run(name, args, timeout=None):
    """Runs a tool; returns its stdout. Raises ReshardError on failure."""
    cmd = [tool(name)] + [str(a) for a in args]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ReshardError(f"{name} timed out after {timeout} s")
    if r.returncode:
        msg = (r.stderr or r.stdout).strip().splitlines()
        tail = "\n".join(msg[-20:]) if msg else "(no output)"
        raise ReshardError(f"{name} failed (exit {r.returncode}):\n{tail}")
    return r.stdout


def import_json(json_path, mlir_path):
    """The JSON interchange format -> reshard dialect, by the importer."""
    run("reshard-translate", ["--import-layout-json", json_path,
                              "-o", mlir_path])


def verify(path):
    """Parses and verifies a .mlir or layout .json file."""
    run("reshard-opt", [path, "-o", os.devnull])


def check(path):
    """Plans and executes every rank in one process, checking every
    destination element (reshard-run --check); returns its output."""
    return run("reshard-run", [path, "--check"])
