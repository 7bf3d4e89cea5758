"""Running a compiled plan from Python on the tensors a job holds.

    plan = reshard.compile(layout, backend="mpi")       # or Plan.load(lib)
    plan.run(src, dst, comm, verify=True)

A Plan wraps the C entry points of one plan in a shared library
(docs/Runtime.md "The C ABI"). `run` checks every tensor against this
rank's shard before any byte moves, and a rank whose tensors are wrong
makes every rank fail (the plan's agreement), so all ranks raise together
and nothing is written. Conventions and costs: docs/Python.md "Running a
plan".
"""
from __future__ import annotations

import contextlib
import ctypes
import threading
from typing import Any, Dict, List, Mapping, Optional, Tuple

from . import buffers, comms
from .errors import ReshardError
from .mesh import _is_bool, _is_int

_ERR_BYTES = 1024
_RUN_VERIFY = 1  # RESHARD_RUN_VERIFY of ExecutionEngine/ErrorCodes.h
# RESHARD_ERR_COMM, _TIMEOUT, _CUDA: what a run can return on one rank
# once the ranks agreed (and, rarely, before: a failed cudaMalloc of the
# agreement's buffer); 1-4 and 8 come from the agreement, alike everywhere.
_FAILED_AFTER_AGREEMENT = (5, 6, 7)
# The buffers of MPI runs that failed after the agreement: a send released
# at the deadline may still read them (the workspace, or a shard sent in
# place), so they are never freed; the job must abort anyway.
_KEPT_AFTER_FAILURE: List[Any] = []


def tells_peers(rc: int, verify: bool, comm: Any) -> bool:
    """Whether a rank whose run returned `rc` joins verify's exchange to
    say why, rather than raising at once. Its peers may be waiting there
    (5-7 after the agreement), or in the agreement (5-7 before it): only a
    deadline bounds both, so only with RESHARD_TIMEOUT_SECONDS; and never
    over a communicator the failure aborted."""
    return (verify and rc in _FAILED_AFTER_AGREEMENT and
            0 < comms.timeout_seconds() < float("inf") and
            not comm.exchange_on_aborted_comm)


class Digest(ctypes.Structure):
    """reshard_digest of ExecutionEngine/ErrorCodes.h."""
    _fields_ = [("sender", ctypes.c_int32), ("receiver", ctypes.c_int32),
                ("phase", ctypes.c_int32), ("tensor", ctypes.c_int32),
                ("direction", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("digest", ctypes.c_uint64), ("bytes", ctypes.c_int64)]


def _bind(lib: Any, name: str, prefix: str):
    """The plan's C functions, typed."""
    P = ctypes.POINTER
    vp, i32, i64, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, \
        ctypes.c_size_t
    sigs = {
        "workspace_bytes": (sz, [i32]),
        "run_flags": (i32, [i32, P(vp), P(vp), vp, vp, vp, sz,
                            ctypes.c_uint, ctypes.c_char_p, sz]),
        "reject": (i32, [i32, vp, vp, ctypes.c_char_p, ctypes.c_char_p,
                         sz]),
        "fingerprint": (ctypes.c_uint64, []),
        "num_ranks": (i32, []),
        "num_tensors": (i32, []),
        "tensor_name": (ctypes.c_char_p, [i32]),
        "tensor_dtype": (ctypes.c_char_p, [i32]),
        "source_dtype": (ctypes.c_char_p, [i32]),
        "tensor_ndim": (i32, [i32]),
        "shard_shape": (i32, [i32, i32, i32, P(i64)]),
        "src_bytes": (i64, [i32, i32]),
        "dst_bytes": (i64, [i32, i32]),
        "digests": (i64, [i32, P(vp), P(vp), vp, P(Digest), i64]),
        "backend": (ctypes.c_char_p, []),
    }
    fns = {}
    for short, (res, args) in sigs.items():
        try:
            f = getattr(lib, f"{prefix}_{short}")
        except AttributeError:
            raise ReshardError(f"{name}: no function {prefix}_{short}: not a "
                               f"plan built by this version of reshard "
                               f"(rebuild it)")
        f.restype, f.argtypes = res, args
        fns[short] = f
    return fns


def _discover(lib: Any, path: str) -> List[str]:
    try:
        count = ctypes.c_int.in_dll(lib, "reshard_num_plans").value
        names = (ctypes.c_char_p * 64).in_dll(lib, "reshard_plans")
    except ValueError:
        raise ReshardError(f"{path}: no reshard plan in it (no "
                           f"reshard_num_plans symbol)")
    return [names[i].decode() for i in range(min(count, 64))]


class Plan:
    """One compiled plan: `tensors` (names in plan order), `num_ranks`,
    `fingerprint`, `backend` ("mpi" or "nccl"), `local_shape()`, `run()`."""

    def __init__(self, lib: Any, name: str, path: str):
        self._lib, self.name, self.path = lib, name, path
        self._c = _bind(lib, path, name)
        self.backend = self._c["backend"]().decode()
        self.num_ranks = self._c["num_ranks"]()
        self.fingerprint = int(self._c["fingerprint"]())
        self.tensors = [self._c["tensor_name"](t).decode("utf-8", "replace")
                        for t in range(self._c["num_tensors"]())]
        self._index = {n: t for t, n in enumerate(self.tensors)}
        raw = (self._c["tensor_dtype"](t) for t in range(len(self.tensors)))
        self._dtypes = [d.decode() if d else None for d in raw]
        # A payload quantized on its senders is given at full precision
        # (docs/Runtime.md "Quantized destinations").
        raw = (self._c["source_dtype"](t) for t in range(len(self.tensors)))
        self._src_dtypes = [d.decode() if d else None for d in raw]
        self._workspace: Dict[Tuple[str, int], Any] = {}
        # Per (rank, side): every tensor's shard shape, asked once (run()
        # checks them on every call).
        self._shapes: Dict[Tuple[int, str], List[Any]] = {}

    @classmethod
    def load(cls, path: str, name: Optional[str] = None) -> "Plan":
        """The plan `name` of the shared library at `path` (from
        reshard_add_plan(... SHARED) or compile()); `name` may be left out
        when the library holds one plan."""
        comms.torch_nccl_first(str(path))
        try:
            # RTLD_LOCAL: each library's weak plan list stays its own.
            lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)
        except OSError as e:
            raise ReshardError(f"cannot load {path}: {e}")
        names = _discover(lib, str(path))
        if name is None:
            if len(names) != 1:
                raise ReshardError(f"{path} holds {len(names)} plans "
                                   f"({', '.join(names) or 'none'}): name one")
            name = names[0]
        elif name not in names:
            raise ReshardError(f"{path} has no plan '{name}' (it has: "
                               f"{', '.join(names) or 'none'})")
        return cls(lib, name, str(path))

    def _tensor(self, name: str) -> int:
        if not isinstance(name, str) or name not in self._index:
            raise ReshardError(f"plan {self.name} has no tensor '{name}'")
        return self._index[name]

    def dtype(self, name: str, side: str = "dst") -> Optional[str]:
        """The dtype of one side's shards: a quantized payload's source is
        bf16, fp16 or fp32 and its destination fp8e4m3; its scales
        (`<name>.scale`, fp32 or uint8 for E8M0) have no source (None)."""
        if side not in ("src", "dst"):
            raise ReshardError(f"side must be 'src' or 'dst', not {side!r}")
        t = self._tensor(name)
        return self._src_dtypes[t] if side == "src" else self._dtypes[t]

    def local_shape(self, name: str, rank: int, side: str
                    ) -> Optional[Tuple[int, ...]]:
        """This rank's shard shape of one side ("src" or "dst") of a
        tensor, or None where the rank holds no shard of that side."""
        if side not in ("src", "dst"):
            raise ReshardError(f"side must be 'src' or 'dst', not {side!r}")
        rank = _rank(rank)
        return self._shard_shapes(rank, side)[self._tensor(name)]

    def _shard_shapes(self, rank: int, side: str) -> List[Any]:
        key = (rank, side)
        if key not in self._shapes:
            shapes = []
            for t in range(len(self.tensors)):
                dims = (ctypes.c_int64 * max(1, self._c["tensor_ndim"](t)))()
                n = self._c["shard_shape"](rank, t, side == "src", dims)
                shapes.append(None if n < 0 else tuple(dims[:n]))
            self._shapes[key] = shapes
        return self._shapes[key]

    # -- run ---------------------------------------------------------------

    def _check_side(self, tensors: Mapping[str, Any], side: str, rank: int
                    ) -> Tuple[List[Any], List[str]]:
        """This rank's pointers for one side, and every problem found."""
        problems: List[str] = []
        ptrs: List[Any] = [None] * len(self.tensors)
        if not isinstance(tensors, Mapping):
            return ptrs, [f"{side} must map tensor names to tensors, not a "
                          f"{type(tensors).__name__}"]
        for key in tensors:
            if key not in self._index:
                problems.append(f"{side}: '{key}' is not a tensor of plan "
                                f"{self.name}")
        want_device = "cpu" if self.backend == "mpi" else "cuda"
        shapes = self._shard_shapes(rank, side)
        for t, name in enumerate(self.tensors):
            shape = shapes[t]
            needed = shape is not None and _numel(shape) > 0
            if name not in tensors:
                if needed:
                    problems.append(f"{side}: '{name}' is missing (rank "
                                    f"{rank} holds a shard of shape "
                                    f"{list(shape)})")
                continue
            try:
                buf = buffers.describe(tensors[name])
            except Exception as e:  # anything: every rank must still agree
                problems.append(f"{side}: '{name}': {e}")
                continue
            where = f"{side}: '{name}' on rank {rank}"
            if shape is None and buf.nbytes:
                problems.append(f"{where}: this rank holds no shard of it; "
                                f"leave it out (or pass an empty tensor)")
                continue
            if shape is not None and buf.shape != shape:
                problems.append(f"{where}: shape {list(buf.shape)}, but "
                                f"this rank's shard is {list(shape)}")
            dtype = (self._src_dtypes if side == "src" else self._dtypes)[t]
            # FP8 tensors and payloads may also be given as raw bytes, bf16
            # as raw 16-bit words (numpy has neither), and MX scales (E8M0
            # bytes) as torch's float8_e8m0fnu.
            raw_bits = (dtype, buf.dtype) in (("fp8e4m3", "uint8"),
                                              ("fp8e5m2", "uint8"),
                                              ("bf16", "uint16"))
            e8m0 = dtype == "uint8" and str(
                getattr(tensors[name], "dtype", "")).endswith("float8_e8m0fnu")
            widens = side == "dst" and _widens(dtype, buf)
            if dtype and buf.dtype != dtype and not (raw_bits or e8m0 or
                                                     widens):
                problems.append(f"{where}: dtype {buf.dtype or 'unknown'}, "
                                f"the plan's is {dtype}")
            if not buf.device.startswith(want_device):
                problems.append(f"{where}: on {buf.device}, an "
                                f"{self.backend.upper()} plan needs "
                                f"{want_device} memory")
            if not buf.contiguous:
                problems.append(f"{where}: not contiguous (call "
                                f".contiguous() on a copy, or pass a "
                                f"contiguous view)")
            if side == "dst" and not buf.writable:
                problems.append(f"{where}: read-only")
            if needed:
                ptrs[t] = buf
        return ptrs, problems

    def run(self, src: Mapping[str, Any], dst: Mapping[str, Any], comm: Any,
            stream: Any = None, verify: bool = False) -> None:
        """Moves this rank's part of the plan: `src` and `dst` map tensor
        names to this rank's shards. Raises ReshardError on every rank when
        any rank's call is wrong, with nothing written."""
        if not _is_bool(verify):
            raise ReshardError(f"verify must be True or False, not "
                               f"{verify!r}")
        verify = bool(verify)
        c = comms.wrap(comm, self.backend)
        stream_handle = None
        if self.backend == "nccl":
            stream_handle = stream if stream is not None else \
                comms.current_stream()
            handle = stream_handle if isinstance(stream_handle, int) else \
                getattr(stream_handle, "cuda_stream", None)
            if isinstance(handle, bool) or not isinstance(handle, int):
                raise ReshardError(f"stream must be a torch CUDA stream or "
                                   f"a cudaStream_t handle, not "
                                   f"{type(stream_handle).__name__}")
            stream_handle = handle
        rank = c.rank
        src_bufs, problems = self._check_side(src, "src", rank)
        dst_bufs, more = self._check_side(dst, "dst", rank)
        problems += more + _overlaps(self.tensors, src_bufs, dst_bufs)
        # Wider destinations receive into a shard of the plan's dtype,
        # widened once the run has succeeded (nothing written otherwise).
        staged = {}
        for t, buf in enumerate(dst_bufs):
            if problems or buf is None or not _widens(self._dtypes[t], buf):
                continue
            try:
                dst_bufs[t] = _staging(buf, self._dtypes[t], stream_handle)
                staged[t] = buf
            except Exception as e:  # out of memory: every rank must agree
                problems.append(f"dst: '{self.tensors[t]}' on rank {rank}: "
                                f"no staging shard for widening: {e}")
        err = ctypes.create_string_buffer(_ERR_BYTES)
        # Two calls at once on one communicator would match each other's
        # messages: this process's threads take turns on it.
        with _comm_lock(self.backend, getattr(c.handle, "value", c.handle)):
            if problems:
                why = "; ".join(problems[:8]) + (
                    f" (and {len(problems) - 8} more)" if len(problems) > 8
                    else "")
                self._c["reject"](rank, c.handle, stream_handle,
                                  why.encode(), err, _ERR_BYTES)
                raise ReshardError(err.value.decode("utf-8", "replace"))
            src_ptrs = _pointers(src_bufs)
            dst_ptrs = _pointers(dst_bufs)
            ws, ws_bytes = self._workspace_for(rank)
            # verify=True is in the agreement: a rank asking for it alone
            # fails with the others instead of waiting for their digests.
            rc = self._c["run_flags"](rank, src_ptrs, dst_ptrs, c.handle,
                                      stream_handle, ws, ws_bytes,
                                      _RUN_VERIFY if verify else 0, err,
                                      _ERR_BYTES)
            failure = None
            if rc in _FAILED_AFTER_AGREEMENT and self.backend == "mpi":
                _KEPT_AFTER_FAILURE.append((src_bufs, dst_bufs, ws))
            if rc:
                failure = (err.value.decode("utf-8", "replace") or
                           f"{self.name}_run_flags returned {rc}")
                if not tells_peers(rc, verify, c):
                    raise ReshardError(failure)
            if verify:
                from .verify import verify_run
                verify_run(self, c, rank, src_bufs, dst_bufs, failure)
            try:
                _widen(staged, dst_bufs, stream_handle)
            except Exception as e:  # noqa: BLE001 - after every rank ran
                raise ReshardError(f"{self.name}: rank {rank}: the run "
                                   f"succeeded but widening into fp32 "
                                   f"failed: {e}") from e

    def _workspace_for(self, rank: int) -> Tuple[Any, int]:
        """A workspace of this rank's size, kept between calls."""
        n = self._c["workspace_bytes"](rank)
        if n == 0:
            return None, 0
        key = (self.backend, rank)
        ws = self._workspace.get(key)
        if ws is None or ws[1] < n:
            if self.backend == "mpi":
                buf = ctypes.create_string_buffer(n)
                ws = (buf, n, ctypes.addressof(buf))
            else:
                import torch
                buf = torch.empty(n, dtype=torch.uint8, device="cuda")
                ws = (buf, n, buf.data_ptr())
            self._workspace[key] = ws
        return ws[2], ws[1]

    def host_workspace(self, rank: int) -> Any:
        """A host copy of this rank's workspace as the last run left it
        (None when it has none): tensors quantized on their receivers are
        digested over the full-precision shadows it holds."""
        ws = self._workspace.get((self.backend, _rank(rank)))
        if ws is None:
            return None
        if self.backend == "mpi":
            return ws[0]
        return ws[0].cpu().numpy()

    def digests(self, rank: int, src_bufs: List[Any], dst_bufs: List[Any],
                workspace: Any = None) -> List[Digest]:
        """This rank's digests (host buffers only; `workspace` from
        host_workspace)."""
        rank = _rank(rank)
        for side, bufs in (("src", src_bufs), ("dst", dst_bufs)):
            if not isinstance(bufs, (list, tuple)) or \
                    len(bufs) != len(self.tensors) or not all(
                        b is None or isinstance(b, buffers.Buffer)
                        for b in bufs):
                raise ReshardError(f"digests: {side} must list a Buffer "
                                   f"(or None) for each of the plan's "
                                   f"{len(self.tensors)} tensors")
        src_ptrs, dst_ptrs = _pointers(src_bufs), _pointers(dst_bufs)
        if workspace is None:
            ws = None
        elif isinstance(workspace, ctypes.Array):
            ws = ctypes.addressof(workspace)
        else:
            ws = workspace.ctypes.data
        n = self._c["digests"](rank, src_ptrs, dst_ptrs, ws, None, 0)
        if n < 0:
            raise ReshardError(f"{self.name}_digests({rank}) failed ({n})")
        out = (Digest * max(1, n))()
        got = self._c["digests"](rank, src_ptrs, dst_ptrs, ws, out, n)
        if got != n:
            raise ReshardError(f"{self.name}_digests({rank}): a shard it "
                               f"needs is missing ({got})")
        return list(out[:n])


_COMM_LOCKS: Dict[Tuple[str, Any], Any] = {}
_COMM_LOCKS_GUARD = threading.Lock()


def _comm_lock(backend: str, handle: Any) -> Any:
    """The lock of one communicator (by its handle) in this process."""
    with _COMM_LOCKS_GUARD:
        return _COMM_LOCKS.setdefault((backend, handle), threading.Lock())


def _overlaps(names: List[str], src_bufs: List[Any], dst_bufs: List[Any]
              ) -> List[str]:
    """Destinations that share memory with another destination or with a
    source: the run would read what it has written, or write one tensor
    over another. Sources may share memory with each other."""
    spans = []
    for side, bufs in (("src", src_bufs), ("dst", dst_bufs)):
        for t, b in enumerate(bufs):
            if b is not None and b.nbytes:
                spans.append((b.address, b.address + b.nbytes, side, t,
                              b.device))
    spans.sort()
    problems: List[str] = []
    for i, a in enumerate(spans):
        for b in spans[i + 1:]:
            if b[0] >= a[1]:
                break
            if (a[2], b[2]) != ("src", "src") and a[4] == b[4]:
                problems.append(
                    f"{a[2]}: '{names[a[3]]}' and {b[2]}: '{names[b[3]]}' "
                    f"share memory (bytes {b[0] - a[0]} to "
                    f"{min(a[1], b[1]) - a[0]} of the first); a destination "
                    f"shares memory with no other tensor of the call")
    return problems


# Plan dtypes whose destination may be fp32 (the torch dtype of their
# staging shard): vLLM keeps some parameters in fp32 that the checkpoint
# and Megatron hold in bf16 (GLM-4.5's router gate, Qwen3-Next's A_log).
# bf16 -> fp32 keeps every bit (NaN payloads too); fp16 -> fp32 in torch
# may quiet a NaN, so it is not offered.
_WIDENS = {"bf16": "bfloat16"}


def _widens(dtype: Optional[str], buf: Any) -> bool:
    """Whether a destination of another dtype is one a run widens into:
    fp32 torch tensors for bf16 shards."""
    return (dtype in _WIDENS and buf.dtype == "fp32"
            and buffers._module(buf.keep) == "torch")


def _staging(buf: Any, dtype: str, stream: Any) -> Any:
    """A shard of the plan's dtype on the destination's device, allocated
    on the run's stream (the plan writes it there)."""
    import torch
    with _on_stream(stream):
        t = torch.empty(buf.shape, dtype=getattr(torch, _WIDENS[dtype]),
                        device=buf.keep.device)
    return buffers.describe(t)


def _on_stream(stream: Any) -> Any:
    """torch's current stream set to the run's CUDA stream (a handle), or
    nothing for MPI plans."""
    if stream is None:
        return contextlib.nullcontext()
    import torch
    return torch.cuda.stream(torch.cuda.ExternalStream(stream))


def _widen(staged: Dict[int, Any], bufs: List[Any], stream: Any) -> None:
    """Copies each staged shard into its wider destination, on the run's
    stream for device tensors."""
    # The staging shards were allocated on that stream too, so torch's
    # allocator reuses them only for work queued after the copy.
    import torch
    with _on_stream(stream), torch.no_grad():   # a Parameter may need grad
        for t, dst in staged.items():
            dst.keep.copy_(bufs[t].keep)


def _rank(rank: Any) -> int:
    if not _is_int(rank) or not 0 <= rank < 2**31:
        raise ReshardError(f"rank must be an int in [0, 2^31), not "
                           f"{rank!r}")
    return int(rank)


def _numel(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _pointers(bufs: List[Any]):
    arr = (ctypes.c_void_p * max(1, len(bufs)))()
    for i, b in enumerate(bufs):
        arr[i] = b.address if b is not None else None
    return arr
