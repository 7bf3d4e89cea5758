#!/usr/bin/env python3
"""PyTorch DTensor `redistribute` on CPU over gloo, timed the way the MPI
programs are (barrier, wall time of the slowest rank, median of --reps),
every destination element checked against its global index, and the bytes
it moves counted from the collectives it issues.

  python dtensor_bench.py --case NAME --reps R     (run with a torch python)

Prints the time of every repetition (after one untimed warm-up) and one
line `dtensor CASE: median S s ..., bytes B, collectives {...}, check: all
correct (N destination elements)`.

Bytes: a TorchDispatchMode records every c10d functional collective that
redistribute dispatches (the ops CommDebugMode counts) with its tensor
sizes; the bytes are what the collective's definition sends from each rank
to other ranks, summed over ranks: all_gather_into_tensor (n bytes in, group
g): n*(g-1) per rank; all_to_all_single: the input minus the rank's own
chunk; reduce_scatter_tensor (n in): n*(g-1)/g; all_reduce (n): 2n(g-1)/g;
broadcast (n): n*(g-1) at the root. Gloo's own algorithms (rings, pairwise
exchange) may move more; this is the logical lower figure.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

# Importable without torch (measured_bench.py builds the reshard layouts of
# the same cases from CASES); the workers import it.
try:
    import torch
    import torch.distributed as dist
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:
    torch = None
    TorchDispatchMode = object

# name: (mesh shape, global shape, source, destination); a placement list
# gives per mesh axis the tensor dim it shards (None: Replicate), as
# DTensor's placements do.
CASES = {
    "tp4-rows-to-cols": ((4,), (4096, 4096), (0,), (1,)),
    "mesh2x4-swap": ((2, 4), (4096, 4096), (0, 1), (1, 0)),
    "tp4-uneven": ((4,), (4001, 4093), (0,), (1,)),
    "mesh2x4-uneven-swap": ((2, 4), (3999, 4001), (0, 1), (1, 0)),
    "tp4-smoke": ((4,), (66, 30), (0,), (1,)),
}


def placements(spec):
    from torch.distributed.tensor import Replicate, Shard
    return tuple(Replicate() if d is None else Shard(d) for d in spec)


class CollectiveBytes(TorchDispatchMode):
    """Counts the bytes of the c10d functional collectives dispatched."""

    def __init__(self, world):
        super().__init__()
        self.world = world
        self.bytes = 0
        self.counts = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.__name__.split(".")[0]
        ns = getattr(func, "namespace", "")
        if ns in ("_c10d_functional", "c10d_functional", "c10d") and \
                name not in ("wait_tensor", "_wrap_tensor_autograd"):
            self.counts[name] = self.counts.get(name, 0) + 1
            self.bytes += self.count(name, args)
        return func(*args, **kwargs)

    def count(self, name, args):
        t = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if t is None:
            return 0
        n = t.numel() * t.element_size()
        if name == "all_gather_into_tensor":
            g = args[1]
            return n * (g - 1)
        if name == "all_to_all_single":
            splits = args[2] if len(args) > 2 and args[2] else None
            rank = dist.get_rank(_group_of(args))
            if splits:
                own = splits[rank] * (n // max(t.shape[0], 1))
            else:
                own = n // _group_size(args)
            return n - own
        if name == "reduce_scatter_tensor":
            g = args[2]
            return n * (g - 1) // g
        if name == "all_reduce":
            g = _group_size(args)
            return 2 * n * (g - 1) // g
        if name == "broadcast":
            g = _group_size(args)
            return n * (g - 1) if dist.get_rank(_group_of(args)) == args[1] \
                else 0
        return 0


def _group_of(args):
    from torch.distributed.distributed_c10d import _resolve_process_group
    return _resolve_process_group(args[-1])


def _group_size(args):
    return dist.get_world_size(_group_of(args))


def expected_local(full, mesh, spec):
    """The local shard DTensor defines: nested torch.chunk per sharded dim."""
    coord = mesh.get_coordinate()
    local = full
    for axis, dim in enumerate(spec):
        if dim is not None:
            parts = torch.chunk(local, mesh.size(axis), dim=dim)
            idx = coord[axis]
            if idx < len(parts):
                local = parts[idx]
            else:
                shape = list(local.shape)
                shape[dim] = 0
                local = local.new_empty(shape)
    return local


def worker(rank, world, case, reps, init, out):
    torch.set_num_threads(1)
    from torch.distributed.tensor import DeviceMesh, distribute_tensor
    dist.init_process_group("gloo", init_method=init, rank=rank,
                            world_size=world)
    mesh_shape, shape, src_spec, dst_spec = CASES[case]
    src_p, dst_p = placements(src_spec), placements(dst_spec)
    mesh = DeviceMesh("cpu", torch.arange(world).reshape(mesh_shape))
    numel = 1
    for s in shape:
        numel *= s
    assert numel <= 1 << 24, "fp32 holds the global index exactly up to 2^24"
    full = torch.arange(numel, dtype=torch.float32).reshape(shape)
    src = distribute_tensor(full, mesh, src_p)
    # One untimed warm-up, as the MPI programs, which also counts the
    # collectives (redistribute issues the same ones every call); the timed
    # repetitions run without the dispatch mode, whose Python hook on every
    # op would otherwise be charged to DTensor.
    dist.barrier()
    counter = CollectiveBytes(world)
    with counter:
        local = src.redistribute(mesh, dst_p).to_local()
        if hasattr(local, "wait"):
            local = local.wait()
    b = torch.tensor([counter.bytes], dtype=torch.int64)
    dist.all_reduce(b)
    moved, counts = b.item(), counter.counts
    times = []
    for r in range(reps):
        dist.barrier()
        t0 = time.perf_counter()
        dst = src.redistribute(mesh, dst_p)
        local = dst.to_local()
        if hasattr(local, "wait"):
            local = local.wait()
        mine = torch.tensor([time.perf_counter() - t0], dtype=torch.float64)
        dist.all_reduce(mine, op=dist.ReduceOp.MAX)
        times.append(mine.item())
    want = expected_local(full, mesh, dst_spec)
    ok = torch.tensor([int(local.shape == want.shape and
                           torch.equal(local, want))], dtype=torch.int64)
    checked = torch.tensor([local.numel()], dtype=torch.int64)
    dist.all_reduce(ok, op=dist.ReduceOp.MIN)
    dist.all_reduce(checked)
    if rank == 0:
        with open(out, "w") as f:
            f.write("dtensor %s: reps %s\n" % (
                case, " ".join("%.6f" % t for t in times)))
            f.write("dtensor %s: median %.6f s min %.6f s over %d reps, "
                    "bytes %d, collectives %s, check: %s (%d destination "
                    "elements)\n" % (
                        case, statistics.median(times), min(times), reps,
                        moved, dict(sorted(counts.items())),
                        "all correct" if ok.item() else "WRONG",
                        checked.item()))
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--case", choices=sorted(CASES), required=True)
    p.add_argument("--reps", type=int, default=5)
    a = p.parse_args()
    world = 1
    for s in CASES[a.case][0]:
        world *= s
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "result.txt")
        init = "file://" + os.path.join(d, "store")
        torch.multiprocessing.spawn(worker, args=(world, a.case, a.reps, init,
                                                  out), nprocs=world)
        with open(out) as f:
            sys.stdout.write(f.read())
    return 0


def case_layout(case):
    """The same redistribution as a reshard layout JSON (fp32)."""
    mesh_shape, shape, src_spec, dst_spec = CASES[case]
    axes = ["a%d" % i for i in range(len(mesh_shape))]

    def dims(spec):
        d = [[] for _ in shape]
        for axis, dim in enumerate(spec):
            if dim is not None:
                d[dim].append(axes[axis])
        return d
    world = 1
    for s in mesh_shape:
        world *= s
    return {"meshes": {"m": {"shape": list(mesh_shape), "axes": axes,
                             "ranks": list(range(world))}},
            "topology": {"gpus_per_node": 8, "nvl_domain_size": 8,
                         "nic_GBps_per_gpu": 50, "nvlink_GBps_per_gpu": 450},
            "tensors": [{"name": "w", "shape": list(shape), "dtype": "fp32",
                         "src": {"mesh": "m", "dims": dims(src_spec)},
                         "dst": {"mesh": "m", "dims": dims(dst_spec)}}]}


if __name__ == "__main__":
    sys.exit(main())
