"""Communicators for `Plan.run`: an mpi4py communicator for MPI plans; for
NCCL plans an `ncclComm_t` handle, a torch.distributed NCCL process group
(its own communicator), or a `NcclComm` made here from a unique id shared
over an existing process group. Each gives the handle the C entry points
take, this process's rank, and a way to exchange small Python objects
(for verify=True's digests).
"""
from __future__ import annotations

import array
import ctypes
import importlib.util
import math
import mmap
import os
import pickle
import sys
import time
from typing import Any, List, Optional

from .errors import ReshardError

_NCCL_UNIQUE_ID_BYTES = 128


class _NcclUniqueId(ctypes.Structure):
    """ncclUniqueId, which ncclCommInitRank takes by value: a ctypes array
    argument would pass a pointer instead (and shift the rank argument)."""
    _fields_ = [("internal", ctypes.c_char * _NCCL_UNIQUE_ID_BYTES)]


class _Mpi:
    def __init__(self, comm: Any):
        from mpi4py import MPI
        if comm == MPI.COMM_NULL:  # querying it aborts the job
            raise ReshardError("the communicator is MPI.COMM_NULL")
        self.comm = comm
        self.handle = ctypes.c_void_p(MPI._handleof(comm))
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        # verify's exchange runs on the plan's communicator: collectives
        # never match the run's messages, and after a failed run it is
        # bounded by the deadline (a timeout leaves the communicator unfit
        # for more plans; the exchange's collectives still complete).
        self.exchange_on_aborted_comm = False

    # Nonblocking collectives polled against RESHARD_TIMEOUT_SECONDS, as
    # the plan's own waits are: a rank that never arrives is an error, not
    # a hang. Collectives never match the plan's point-to-point messages.
    def alltoall(self, per_peer: List[Any]) -> List[Any]:
        return self._exchange([pickle.dumps(x) for x in per_peer])

    def allgather(self, obj: Any) -> List[Any]:
        return self._exchange([pickle.dumps(obj)] * self.size)

    def _exchange(self, blobs: List[bytes]) -> List[Any]:
        """blobs[p] to peer p; what every peer sent this rank."""
        from mpi4py import MPI
        counts = array.array("i", [len(b) for b in blobs])
        got = array.array("i", [0] * self.size)
        send = bytearray(b"".join(blobs))
        try:
            self._wait(self.comm.Ialltoall([counts, MPI.INT],
                                           [got, MPI.INT]),
                       "exchange of sizes", counts, got)
            recv = bytearray(sum(got))
            self._wait(self.comm.Ialltoallv(
                [send, (counts, _offsets(counts)), MPI.BYTE],
                [recv, (got, _offsets(got)), MPI.BYTE]), "exchange", send,
                recv)
        except MPI.Exception as e:
            raise ReshardError(f"rank {self.rank}: verify's exchange "
                               f"failed: {e}") from e
        view = memoryview(recv)
        return [pickle.loads(view[a:a + n])
                for a, n in zip(_offsets(got), got)]

    def _wait(self, req: Any, what: str, *buffers: Any) -> None:
        limit = timeout_seconds()
        start = time.monotonic()
        polls = 0
        while True:
            if req.Test():
                return
            polls += 1
            if polls > 1000:
                time.sleep(0.0005)  # oversubscribed ranks yield
                if limit > 0 and time.monotonic() - start > limit:
                    # MPI may still write them: they must outlive us.
                    _ABANDONED.append((req, buffers))
                    raise ReshardError(
                        f"rank {self.rank}: verify's {what} did not complete "
                        f"within RESHARD_TIMEOUT_SECONDS={limit:g} (a rank "
                        f"did not join it); the communicator is unusable now")


def timeout_seconds() -> float:
    """RESHARD_TIMEOUT_SECONDS as the C runtime reads it (CallChecks.h
    parse_timeout): unset, empty or blank is 0, no deadline; otherwise
    libc's strtod of the whole text but blanks ('0x10' is 16), finite and
    above 0. The run refuses any other value (RESHARD_ERR_ARGS); this gives
    0 for it."""
    text = os.fsencode(os.environ.get("RESHARD_TIMEOUT_SECONDS", ""))
    text = text.strip(b" \t\n\v\f\r")
    if not text or b"\0" in text:
        return 0.0
    end = ctypes.c_char_p()
    buf = ctypes.create_string_buffer(text)
    v = _strtod(buf, ctypes.byref(end))
    used = ctypes.cast(end, ctypes.c_void_p).value - ctypes.addressof(buf)
    if used != len(text) or not math.isfinite(v) or not v > 0:
        return 0.0
    return v


def _libc_strtod():
    strtod = ctypes.CDLL(None).strtod
    strtod.restype = ctypes.c_double
    strtod.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p)]
    return strtod


_strtod = _libc_strtod()


# Requests given up on at their deadline, and their buffers.
_ABANDONED: List[Any] = []


def _offsets(counts: List[int]) -> List[int]:
    out, at = [], 0
    for n in counts:
        out.append(at)
        at += n
    return out



def torch_nccl_first(path: Optional[str] = None) -> None:
    """Imports torch (when installed and not yet imported) before NCCL is
    loaded: by `path`, a library that links libnccl.so.2 (an NCCL plan), or
    by NcclComm (path None). torch's wheel brings its own, usually newer,
    libnccl.so.2; the first one loaded owns the name, so loading it first
    makes the plan run on the NCCL of torch's process groups, and torch
    can still load afterwards (after the CUDA toolkit's older NCCL it
    fails: libtorch_cuda.so lacks symbols such as ncclCommResume)."""
    if "torch" in sys.modules:
        return
    if path is not None and os.sep in path and not _links_nccl(path):
        return              # a bare name is looked up as the loader does
    if importlib.util.find_spec("torch") is None:
        return
    try:
        import torch  # noqa: F401
    except Exception:   # a broken torch is the caller's to meet
        pass


def _links_nccl(path: str) -> bool:
    """Whether the library file names libnccl (its DT_NEEDED string),
    searched in place without reading it all; False if unreadable (the
    load reports that)."""
    try:
        with open(path, "rb") as f, \
                mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            return m.find(b"libnccl.so") >= 0
    except (OSError, ValueError):   # ValueError: an empty file
        return False


def _libnccl():
    torch_nccl_first()
    for name in ("libnccl.so.2", "libnccl.so",
                 "/usr/local/cuda/lib64/libnccl.so.2"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise ReshardError("cannot load libnccl.so.2 (NCCL): put its folder on "
                       "LD_LIBRARY_PATH")


def _init_rank(init: Any, size: int, uid: bytes, rank: int):
    """ncclCommInitRank(&comm, size, id, rank) through `init` (the C
    function): (its result, the communicator handle)."""
    init.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                     _NcclUniqueId, ctypes.c_int]
    init.restype = ctypes.c_int
    comm = ctypes.c_void_p()
    rc = init(ctypes.byref(comm), size, _NcclUniqueId.from_buffer_copy(uid),
              rank)
    return rc, comm


class NcclComm:
    """An NCCL communicator of `size` ranks, created from a unique id that
    rank 0 makes and shares over `group` (a torch.distributed process group,
    gloo or NCCL; default the world). Pass it to `Plan.run`; `group` also
    carries verify=True's digests. `destroy()` frees it."""

    def __init__(self, group: Any = None, device: Optional[int] = None):
        import torch
        import torch.distributed as dist
        self.group = group
        self.rank = dist.get_rank(group)
        self.size = dist.get_world_size(group)
        self._nccl = _libnccl()
        uid = ctypes.create_string_buffer(_NCCL_UNIQUE_ID_BYTES)
        if self.rank == 0:
            self._check(self._nccl.ncclGetUniqueId(uid), "ncclGetUniqueId")
        shared = [uid.raw if self.rank == 0 else None]
        dist.broadcast_object_list(shared, src=dist.get_global_rank(
            group, 0) if group is not None else 0, group=group)
        if device is None:
            device = torch.cuda.current_device()
        torch.cuda.set_device(device)
        self.device = device
        rc, comm = _init_rank(self._nccl.ncclCommInitRank, self.size,
                              shared[0], self.rank)
        self._check(rc, "ncclCommInitRank")
        self.handle = comm

    def _check(self, rc: int, what: str) -> None:
        if rc != 0:
            get = self._nccl.ncclGetErrorString
            get.restype = ctypes.c_char_p
            raise ReshardError(f"{what} failed: {get(rc).decode()}")

    def destroy(self) -> None:
        if self.handle:
            self._nccl.ncclCommDestroy(self.handle)
            self.handle = None


class _Nccl:
    def __init__(self, comm: Any):
        import torch.distributed as dist
        self.group = None
        # A torch NCCL group's own communicator carries verify's exchange
        # and the plan: a failed run may abort it (ncclCommAbort).
        self.exchange_on_aborted_comm = False
        if isinstance(comm, NcclComm):
            self.handle, self.rank = comm.handle, comm.rank
            self.size, self.group = comm.size, comm.group
        elif isinstance(comm, int):
            # NCCL dereferences the handle: refuse what cannot be one (a
            # bool, a rank number, an unaligned address) before it does.
            if isinstance(comm, bool) or comm < 65536 or comm % 8:
                raise ReshardError(
                    f"{comm!r} is not an ncclComm_t handle; pass a "
                    f"reshard.NcclComm, a torch NCCL process group or the "
                    f"handle of a communicator")
            self.handle = ctypes.c_void_p(comm)
            nccl = _libnccl()
            rank, size = ctypes.c_int(), ctypes.c_int()
            if (nccl.ncclCommUserRank(self.handle, ctypes.byref(rank)) or
                    nccl.ncclCommCount(self.handle, ctypes.byref(size))):
                raise ReshardError("the NCCL communicator handle does not "
                                   "answer ncclCommUserRank/ncclCommCount")
            self.rank, self.size = rank.value, size.value
            self.exchange_on_aborted_comm = _is_default_groups(comm)
        else:
            import torch
            if not isinstance(comm, dist.ProcessGroup):
                raise ReshardError(
                    f"an NCCL plan runs on an ncclComm_t handle, a torch "
                    f"NCCL process group or a reshard.NcclComm, not a "
                    f"{type(comm).__name__}")
            backend = comm._get_backend(torch.device("cuda"))
            if not hasattr(backend, "_comm_ptr"):
                raise ReshardError(
                    "this torch.distributed process group does not expose "
                    "its NCCL communicator (_comm_ptr); make one with "
                    "reshard.NcclComm(group)")
            self.handle = ctypes.c_void_p(backend._comm_ptr())
            self.rank = dist.get_rank(comm)
            self.size = dist.get_world_size(comm)
            self.group = comm
            self.exchange_on_aborted_comm = True

    def _need_group(self):
        import torch.distributed as dist
        if self.group is None and not dist.is_initialized():
            raise ReshardError("verify=True needs torch.distributed to "
                               "exchange digests: pass a process group or "
                               "a reshard.NcclComm")

    def alltoall(self, per_peer: List[Any]) -> List[Any]:
        # torch has no all-to-all of objects: every rank gathers all lists
        # and keeps its own column.
        rows = self.allgather(per_peer)
        return [row[self.rank] for row in rows]

    def allgather(self, obj: Any) -> List[Any]:
        import torch.distributed as dist
        self._need_group()
        out: List[Any] = [None] * self.size
        dist.all_gather_object(out, obj, group=self.group)
        return out


def _is_default_groups(handle: int) -> bool:
    """Whether an ncclComm_t handle is torch's default group's own (which
    verify's exchange would then run on)."""
    try:
        import torch
        import torch.distributed as dist
        if not dist.is_initialized():
            return False
        backend = dist.group.WORLD._get_backend(torch.device("cuda"))
        return getattr(backend, "_comm_ptr", lambda: None)() == handle
    except Exception:  # noqa: BLE001 - no NCCL default group
        return False


def wrap(comm: Any, backend: str):
    """The communicator of a `backend` plan, checked."""
    if backend == "mpi":
        if type(comm).__module__.split(".")[0] == "mpi4py":
            from mpi4py import MPI
            if isinstance(comm, MPI.Comm):  # (a Group's handle is no Comm)
                return _Mpi(comm)
        raise ReshardError(f"an MPI plan runs on an mpi4py communicator, "
                           f"not a {type(comm).__name__}")
    if type(comm).__module__.split(".")[0] == "mpi4py":
        raise ReshardError("an NCCL plan runs on an NCCL communicator (a "
                           "handle, a torch NCCL process group or a "
                           "reshard.NcclComm), not an mpi4py one")
    return _Nccl(comm)


def current_stream() -> int:
    """torch's current CUDA stream on the current device, as a handle."""
    import torch
    return torch.cuda.current_stream().cuda_stream
