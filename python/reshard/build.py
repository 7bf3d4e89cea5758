"""reshard.compile: a layout to a loaded Plan, through reshard-compile and
the backend's compiler (mpicxx; nvcc for NCCL plans), cached by content.

Every rank of a job may call it at the same moment: one builds under a
file lock, the others wait and load what it built, and a library appears
in the cache only whole (built under a temporary name, then renamed).
"""
from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
from typing import Any, Optional, Union

from . import tools
from .errors import ReshardError, parse_bytes
from .runtime import Plan

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PLAN_NAME = "reshard_plan"


def include_dir() -> str:
    """The execution engine's headers: $RESHARD_INCLUDE or the source
    tree's include/."""
    d = os.environ.get("RESHARD_INCLUDE") or os.path.join(_REPO, "include")
    if not os.path.isfile(os.path.join(d, "reshard", "ExecutionEngine",
                                       "Engine.h")):
        raise ReshardError(f"no reshard/ExecutionEngine/Engine.h under {d}: "
                           f"set RESHARD_INCLUDE to reshard's include folder")
    return d


def cuda_home() -> str:
    return os.environ.get("CUDA_HOME", "/usr/local/cuda")


def _layout_text(layout: Any) -> tuple:
    """(text, suffix) of a Layout or a path to a .json or .mlir layout."""
    if hasattr(layout, "to_dict") and hasattr(layout, "write_json"):
        import io
        f = io.StringIO()
        layout.write_json(f)
        return f.getvalue(), ".json"
    try:
        path = os.fspath(layout)
    except TypeError:
        raise ReshardError(f"layout: give a reshard.Layout or the path of a "
                           f".json or .mlir layout, not "
                           f"{type(layout).__name__}") from None
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    suffix = os.path.splitext(path)[1]
    if suffix not in (".json", ".mlir"):
        raise ReshardError(f"{path}: a layout is a .json or .mlir file (or a "
                           f"reshard.Layout)")
    try:
        with open(path, encoding="utf-8") as f:
            return f.read(), suffix
    except OSError as e:
        raise ReshardError(f"{path}: cannot read: {e.strerror}")
    except UnicodeDecodeError as e:
        raise ReshardError(f"{path}: not UTF-8 text (byte {e.start})")


def _compiler_command(backend: str, cpp: str, lib: str) -> list:
    # -Bsymbolic: the plan list binds inside its own library even when
    # another plan library is loaded globally.
    inc = include_dir()
    if backend == "mpi":
        cxx = os.environ.get("MPICXX", "mpicxx")
        return [cxx, "-shared", "-fPIC", "-O2", "-std=c++17",
                "-Wl,-Bsymbolic", "-I", inc, cpp, "-o", lib]
    cuda = cuda_home()
    return [os.path.join(cuda, "bin", "nvcc"), "-shared", "-Xcompiler",
            "-fPIC", "-O2", "-std=c++17", "-x", "cu", "-I", inc, cpp, "-o",
            lib, "-Xlinker", "-Bsymbolic", "-L" + os.path.join(cuda, "lib64"),
            "-lnccl", "-lcudart",
            "-Xlinker", "-rpath=" + os.path.join(cuda, "lib64")]


# reshard-compile's planning choices that compile() passes on.
_CHOICES = {"transits": ("auto", "always", "never"),
            "relay_tree": ("auto", "never", "bound", "always")}


def _cache_key(text: str, backend: str, budget: Optional[int],
               choices: dict) -> str:
    """Everything the library depends on: the layout, the options, the
    compiler binary and the engine's headers."""
    h = hashlib.sha256()
    for part in (text, backend, str(budget), repr(sorted(choices.items()))):
        h.update(part.encode())
        h.update(b"\0")
    st = os.stat(tools.tool("reshard-compile"))
    h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
    engine = os.path.join(include_dir(), "reshard", "ExecutionEngine")
    for name in sorted(os.listdir(engine)):
        with open(os.path.join(engine, name), "rb") as f:
            h.update(name.encode())
            h.update(f.read())
    return h.hexdigest()[:24]


def compile(layout: Union[Any, str, os.PathLike], backend: str = "mpi",
            staging_budget: Union[int, str, None] = None,
            cache_dir: Optional[str] = None,
            transits: Optional[str] = None,
            relay_tree: Optional[str] = None,
            relay_tree_max_streams: Optional[int] = None,
            receives_ahead: bool = False) -> Plan:
    """Plans, emits and builds `layout` (a reshard.Layout or a .json/.mlir
    path) for `backend` ("mpi" or "nccl") and loads it. `transits`,
    `relay_tree`, `relay_tree_max_streams` and `receives_ahead` are
    reshard-compile's --transits, --relay-tree, --relay-tree-max-streams
    and --receives-ahead (None, False: its defaults). The library is cached under `cache_dir`
    ($RESHARD_CACHE_DIR, else ~/.cache/reshard) by a hash of the layout,
    the options, reshard-compile and the engine's headers."""
    if backend not in ("mpi", "nccl"):
        raise ReshardError(f"backend must be 'mpi' or 'nccl', not "
                           f"{backend!r}")
    choices = {}
    for name, value in (("transits", transits), ("relay_tree", relay_tree)):
        if value is None:
            continue
        if value not in _CHOICES[name]:
            allowed = ", ".join(repr(v) for v in _CHOICES[name])
            raise ReshardError(f"{name} must be one of {allowed}, not "
                               f"{value!r}")
        choices[name] = value
    if relay_tree_max_streams is not None:
        if (not isinstance(relay_tree_max_streams, int)
                or isinstance(relay_tree_max_streams, bool)
                or relay_tree_max_streams < 0):
            raise ReshardError(f"relay_tree_max_streams must be a "
                               f"non-negative number of streams, not "
                               f"{relay_tree_max_streams!r}")
        choices["relay_tree_max_streams"] = relay_tree_max_streams
    if not isinstance(receives_ahead, bool):
        raise ReshardError(f"receives_ahead must be True or False, not "
                           f"{receives_ahead!r}")
    if receives_ahead:
        choices["receives_ahead"] = "true"
    if isinstance(staging_budget, str):  # "256M", as the CLI takes it
        staging_budget = parse_bytes(staging_budget, "staging_budget")
    if staging_budget is not None and (
            not isinstance(staging_budget, int)
            or isinstance(staging_budget, bool) or staging_budget <= 0
            or staging_budget >= 1 << 63):
        raise ReshardError(f"staging_budget must be a positive number of "
                           f"bytes, not {staging_budget!r}")
    text, suffix = _layout_text(layout)
    cache = cache_dir or os.environ.get("RESHARD_CACHE_DIR") or \
        os.path.join(os.path.expanduser("~"), ".cache", "reshard")
    if not isinstance(cache, (str, os.PathLike)):
        raise ReshardError(f"cache_dir={cache!r}: give a folder path")
    try:
        os.makedirs(cache, exist_ok=True)
    except OSError as e:
        raise ReshardError(f"cache_dir {os.fspath(cache)!r}: cannot create "
                           f"it: {e.strerror}") from None
    key = _cache_key(text, backend, staging_budget, choices)
    lib = os.path.join(cache, f"libplan-{backend}-{key}.so")
    if not os.path.exists(lib):
        with open(os.path.join(cache, f"{key}.lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not os.path.exists(lib):  # another rank may have built it
                _build(text, suffix, backend, staging_budget, choices, cache,
                       lib, _shown(layout))
    return Plan.load(lib, PLAN_NAME)


def _shown(layout: Any) -> str:
    """How the importer's messages name the layout."""
    if hasattr(layout, "to_dict"):
        return "<reshard.Layout>"
    return os.fsdecode(os.fspath(layout))


def _build(text: str, suffix: str, backend: str, budget: Optional[int],
           choices: dict, cache: str, lib: str, shown: str) -> None:
    work = tempfile.mkdtemp(prefix="build-", dir=cache)
    try:
        layout = os.path.join(work, "layout" + suffix)
        with open(layout, "w") as f:
            f.write(text)
        cpp = os.path.join(work, "plan.cpp")
        args = [layout, f"--backend={backend}", "-o", cpp,
                f"--plan-name={PLAN_NAME}"]
        if budget is not None:
            args.append(f"--staging-budget={budget}")
        for name, value in sorted(choices.items()):
            args.append(f"--{name.replace('_', '-')}={value}")
        try:
            tools.run("reshard-compile", args)
        except ReshardError as e:   # named as the caller gave the layout
            raise ReshardError(str(e).replace(layout, shown)) from None
        partial = os.path.join(work, "libplan.so")
        cmd = _compiler_command(backend, cpp, partial)
        try:
            r = subprocess.run(cmd, capture_output=True, text=True)
        except OSError as e:
            raise ReshardError(f"cannot run {cmd[0]}: {e.strerror}")
        if r.returncode:
            tail = "\n".join((r.stderr or r.stdout).splitlines()[-20:])
            raise ReshardError(f"{os.path.basename(cmd[0])} failed on the "
                               f"generated plan:\n{tail}")
        os.replace(partial, lib)  # atomic: readers see all of it or none
    finally:
        shutil.rmtree(work, ignore_errors=True)
