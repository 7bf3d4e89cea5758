"""One process of `mpirun -n N python -m mpi4py runtime_worker.py MODE ...`
(mpi4py aborts the job on an uncaught exception), driven by
test_runtime.py. Every rank compiles (or loads) the plan, fills its source
shards with each element's own pattern (a hash of its logical linear
index, as the oracle of test/Tools/reshard-run/Inputs/shards.py places it),
runs the plan from torch CPU tensors and checks every destination element
against the same oracle. Writes its lines ("rank R: ok ..." or "rank R: raised: MESSAGE") to
$RESHARD_WORKER_OUT/rankR.txt.

  check LAYOUT.json [--verify] [--stacked] [--staging-budget N]
        [--fail-after-agreement | --fail-digests | --skip-exchange |
         --late]
                                            run and check every element
                                            (faults on rank 1)
  bad LAYOUT.json KIND...                   one bad argument on rank 1, per kind
  compile LAYOUT.json CACHE                 every rank compiles at once
  other A.json B.json                       rank 0 runs another layout's plan
  refit CONFIG TRAIN INFER LAYERS WORK      through the name mapping
  quant LAYOUT.json                         quantized destinations (verify=True)
                                            against torch's float8 casts
  refit-fp8 CONFIG TRAIN INFER LAYERS WORK [megatron-core]
                                            an FP8 refit through the name
                                            mapping (refit_fp8.py)
"""
import json
import os
import sys

from mpi4py import MPI

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
import reshard  # noqa: E402

sys.path.insert(0, HERE)
from orders_ref import shards  # noqa: E402  the layout oracle

def int_of_size(nbytes):
    return {1: torch.uint8, 2: torch.int16, 4: torch.int32,
            8: torch.int64}[nbytes]
SENTINEL = 0x5A
torch = None  # imported by main() where needed


def pattern(linear, nbytes):
    """An element's expected bits: its logical index, hashed and truncated
    to the element size (as a signed value of that size)."""
    v = (linear * 2654435761 + 12345) % (1 << (8 * nbytes))
    if nbytes > 1 and v >= 1 << (8 * nbytes - 1):
        v -= 1 << (8 * nbytes)
    return v


def torch_dtype(name):
    return {"bf16": torch.bfloat16, "fp16": torch.float16,
            "fp32": torch.float32, "fp64": torch.float64,
            "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16,
            "uint16": torch.uint16, "int32": torch.int32,
            "uint32": torch.uint32, "int64": torch.int64,
            "uint64": torch.uint64,
            "fp8e4m3": torch.float8_e4m3fn,
            "fp8e5m2": torch.float8_e5m2}[name]


def shards_of(layout, rank, stacked=False):
    """src and dst tensors for this rank (dst filled with SENTINEL), and the
    expected dst bits. With `stacked`, the destination shards of tensors of
    one shape and dtype are views into one stacked tensor, as vLLM's
    w13_weight[e]."""
    src, dst, expect = {}, {}, {}
    stacks = {}
    for t in layout["tensors"]:
        nbytes = shards.DTYPE_BYTES[t["dtype"]]
        for side in ("src", "dst"):
            mine = shards.local_shards(layout, t, side).get(rank)
            if mine is None:
                continue
            shape, linear = mine
            bits = torch.tensor([pattern(i, nbytes) for i in linear],
                                dtype=int_of_size(nbytes)).reshape(shape)
            if side == "src":
                src[t["name"]] = bits.view(torch_dtype(t["dtype"]))
                continue
            expect[t["name"]] = bits
            stacks.setdefault((tuple(shape), t["dtype"]), []).append(
                t["name"])
    for (shape, dtype), names in stacks.items():
        nbytes = shards.DTYPE_BYTES[dtype]
        def filled(shape):
            t = torch.empty(shape, dtype=int_of_size(nbytes))
            t.view(torch.uint8).fill_(SENTINEL)
            return t
        if stacked:
            whole = filled((len(names),) + shape)
            views = [whole[e] for e in range(len(names))]
        else:
            views = [filled(shape) for _ in names]
        for n, v in zip(names, views):
            dst[n] = v.view(torch_dtype(dtype))
    return src, dst, expect


def compare(dst, expect):
    bad = 0
    for name, bits in expect.items():
        got = dst[name]
        if got.dtype == torch.float32 and bits.dtype == torch.int16:
            # An fp32 destination of a bf16 tensor: the widened bits
            # (bf16 is fp32's upper half; runtime.py widens with torch).
            want = (bits.to(torch.int32) & 0xFFFF) << 16
            bad += int((got.view(torch.int32) != want).sum())
            continue
        bad += int((got.view(bits.dtype) != bits).sum())
    return bad


def untouched(dst):
    return all(bool((t.view(torch.uint8) == SENTINEL).all())
               for t in dst.values()
               if t.device.type == "cpu" and t.is_contiguous())


def main():
    global torch, print
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    # One file per rank: lines of several processes on one stdout can
    # interleave.
    out = open(os.path.join(os.environ["RESHARD_WORKER_OUT"],
                            f"rank{rank}.txt"), "w")

    def print(line, flush=False):
        out.write(line + "\n")
        out.flush()
    mode, args = sys.argv[1], sys.argv[2:]
    cache = os.environ["RESHARD_CACHE_DIR"]
    try:
        if mode == "compile":
            plan = reshard.compile(args[0], backend="mpi", cache_dir=args[1])
            builds = comm.allgather(plan.path)
            print(f"rank {rank}: ok compiled {len(set(builds))} distinct "
                  f"libraries, fingerprint {plan.fingerprint:x}", flush=True)
            return
        import torch  # not for "compile": eight ranks importing it are slow
        if mode == "refit":
            return refit(comm, rank, cache, *args)
        if mode == "quant":
            return quant(comm, rank, cache, args[0])
        if mode == "refit-fp8":
            import refit_fp8
            return refit_fp8.run(comm, rank, cache, print, *args)
        with open(args[0]) as f:
            layout = json.load(f)
        budget = None
        if "--staging-budget" in args:
            budget = int(args[args.index("--staging-budget") + 1])
        plan = reshard.compile(args[0], backend="mpi", cache_dir=cache,
                               staging_budget=budget)
        if mode == "other":
            if rank == 0:
                plan = reshard.compile(args[1], backend="mpi",
                                       cache_dir=cache)
        if mode == "comm-null":  # every rank: a clear error, no abort
            src, dst, expect = shards_of(layout, rank)
            try:
                plan.run(src, dst, MPI.COMM_NULL)
                print(f"rank {rank}: DID NOT RAISE", flush=True)
            except reshard.ReshardError as e:
                print(f"rank {rank}: raised: {e}", flush=True)
            return
        if mode == "widen":
            return widen(comm, rank, plan, layout)
        if mode == "bad":
            # Each kind in turn on the same plan: every rank must raise
            # and leave its destination untouched.
            for kind in args[1:]:
                src, dst, expect = shards_of(layout, rank)
                spoil(kind, rank, src, dst)
                try:
                    plan.run(src, dst, comm)
                    print(f"rank {rank}: {kind}: DID NOT RAISE", flush=True)
                except reshard.ReshardError as e:
                    clean = "untouched" if untouched(dst) else "WRITTEN"
                    print(f"rank {rank}: {kind}: raised ({clean}): {e}",
                          flush=True)
            return
        src, dst, expect = shards_of(layout, rank, "--stacked" in args)
        if rank == 1:
            inject(plan, args)
        comm.Barrier()  # compiled everywhere: short deadlines hold
        try:
            verify = "--verify" in args or ("--verify-on-rank-0" in args
                                            and rank == 0)
            plan.run(src, dst, comm, verify=verify)
        except reshard.ReshardError as e:
            clean = "untouched" if untouched(dst) else "WRITTEN"
            # Runs MPI may still read from (a send released at a deadline).
            kept = len(reshard.runtime._KEPT_AFTER_FAILURE)
            print(f"rank {rank}: raised ({clean}): {e} [buffers kept: "
                  f"{kept}]", flush=True)
            return
        bad = compare(dst, expect)
        n = sum(int(b.numel()) for b in expect.values())
        print(f"rank {rank}: {'ok' if not bad else 'WRONG'} {n} destination "
              f"elements, {bad} wrong", flush=True)
    except reshard.ReshardError as e:
        print(f"rank {rank}: error: {e}", flush=True)


def refit(comm, rank, cache, config, train, infer, layers, work,
          source="fake"):
    """A refit through the frameworks' own parameters: test_names.py's
    fake Megatron (or, with source "megatron-core", Megatron-Core's own
    GPTModel of this rank: megatron_model.py) and fake vLLM parameters of
    this rank, mapped to the layout by megatron_tensors / vllm_tensors, the
    source views filled with the oracle's pattern, the plan run into the
    vLLM views (verify=True)."""
    import refit_fp8
    import test_names
    m, infer, lay, layout, plan = refit_fp8.build(
        comm, rank, cache, config, train, infer, layers,
        os.path.join(work, "refit.json"))
    unused = []
    if source == "megatron-core":
        import megatron_model
        model = megatron_model.build_rank(m, train, int(layers), comm)
    else:
        model = test_names.megatron_params(m, train, rank,
                                           int(layers)).module()
    src = reshard.megatron_tensors(lay, model, rank, unused=unused)
    fake_dst = test_names.vllm_params(m, infer, rank, int(layers))
    dst = reshard.vllm_tensors(lay, fake_dst.params, rank)
    want_src, _, expect = shards_of(layout, rank)
    for name, view in src.items():
        view.copy_(want_src[name])
    # Every byte of every vLLM parameter starts as the sentinel; the bytes
    # no view covers (a padded vocab's padding rows) must keep it.
    for _, param in fake_dst.params:
        param.view(torch.uint8).fill_(SENTINEL)
    before = {n: param.clone() for n, param in fake_dst.params}
    plan.run(src, dst, comm, verify=True)
    bad = compare(dst, expect)
    missing = sorted(set(expect) - set(dst))
    outside = 0
    for n, param in fake_dst.params:
        mask = torch.ones(param.numel(), dtype=torch.bool)
        base = param.untyped_storage().data_ptr()
        for view in dst.values():
            if view.untyped_storage().data_ptr() == base:
                start = (view.data_ptr() - param.data_ptr()) // \
                    param.element_size()
                mask[start:start + view.numel()] = False
        changed = param.view(torch.uint8).flatten() != \
            before[n].view(torch.uint8).flatten()
        outside += int(changed.view(-1, param.element_size()).any(1)[mask]
                       .sum())
    n = sum(int(b.numel()) for b in expect.values())
    ok = not bad and not missing and not outside
    print(f"rank {rank}: {'ok' if ok else 'WRONG'} {n} destination "
          f"elements through {len(src)} Megatron and {len(dst)} vLLM "
          f"parameter views, {bad} wrong, {len(missing)} unmapped, "
          f"{outside} written outside them; Megatron unused: "
          f"{sorted(unused)}", flush=True)


def inject(plan, args):
    """Rank 1's faults after the plan's agreement, for verify=True: its run
    fails once the bytes moved, its digests fail, or it skips the exchange."""
    import ctypes
    if "--fail-after-agreement" in args:
        real = plan._c["run_flags"]

        def failing(*a):
            real(*a)
            why = f"{plan.name}: rank 1: injected failure after the run"
            ctypes.memmove(a[8], why.encode() + b"\0", len(why) + 1)
            return 6
        plan._c["run_flags"] = failing
    if "--fail-digests" in args:
        def failing_digests(*a):
            raise RuntimeError("injected digest failure")
        plan.digests = failing_digests
    if "--skip-exchange" in args:
        import reshard.verify
        reshard.verify.verify_run = lambda *a: None
    if "--late" in args:    # past the deadline of test_runtime's call
        import time
        real_run = plan._c["run_flags"]

        def late(*a):
            time.sleep(4)
            return real_run(*a)
        plan._c["run_flags"] = late


def widen(comm, rank, plan, layout):
    """fp32 destinations of the bf16 tensors: a run another rank rejects
    leaves them untouched, a good one (verify=True) fills them with the
    widened values."""
    src, narrow, expect = shards_of(layout, rank)
    dst = {}
    for n, t in narrow.items():
        dst[n] = t
        if t.dtype == torch.bfloat16:
            dst[n] = torch.empty(t.shape, dtype=torch.float32)
            dst[n].view(torch.uint8).fill_(SENTINEL)
    wide = sorted(n for n, t in dst.items() if t.dtype == torch.float32)
    bad_src = dict(src)
    if rank == 1:
        name = next(n for n, t in src.items() if t.numel() > 1)
        bad_src[name] = torch.zeros(src[name].numel() + 1,
                                    dtype=src[name].dtype)
    try:
        plan.run(bad_src, dst, comm)
        print(f"rank {rank}: DID NOT RAISE", flush=True)
        return
    except reshard.ReshardError:
        pass
    clean = "untouched" if untouched(dst) else "WRITTEN"
    plan.run(src, dst, comm, verify=True)
    bad = compare(dst, expect)
    print(f"rank {rank}: {'ok' if not bad else 'WRONG'} {bad} wrong, "
          f"fp32 {wide}, after a rejected run {clean}", flush=True)


def spoil(kind, rank, src, dst):
    """One bad argument on rank 1."""
    if rank != 1:
        return
    side = dst if kind.startswith("dst") else src
    name = next(n for n, t in side.items() if t.numel() > 1)
    t = side[name]
    if kind == "src-shape":
        side[name] = torch.zeros(t.numel() + 1, dtype=t.dtype)
    elif kind == "src-dtype":
        side[name] = torch.zeros(t.shape, dtype=torch.float64
                                 if t.dtype != torch.float64 else torch.int8)
    elif kind == "dst-device":
        side[name] = torch.empty(t.shape, dtype=t.dtype, device="meta")
    elif kind == "dst-noncontiguous":
        wide = torch.zeros(t.shape + (2,), dtype=t.dtype)
        side[name] = wide[..., 0]
    elif kind == "src-missing":
        del side[name]
    elif kind == "dst-extra":
        side["no.such.tensor"] = torch.full((1,), SENTINEL, dtype=torch.uint8)
    elif kind == "src-not-a-tensor":
        side[name] = [1, 2, 3]
    elif kind == "src-sparse":  # torch raises when asked for its address
        side[name] = t.to_sparse()
    elif kind == "src-dst-overlap":  # a destination over a source's bytes
        d_name = next(n for n, d in dst.items() if d.numel() > 0)
        d = dst[d_name]
        nbytes = [x.numel() * x.element_size() for x in (t, d)]
        base = torch.full((max(nbytes),), SENTINEL, dtype=torch.uint8)
        side[name] = base[:nbytes[0]].view(t.dtype).view(t.shape)
        dst[d_name] = base[:nbytes[1]].view(d.dtype).view(d.shape)
    else:
        raise SystemExit(f"unknown kind {kind}")



def quant(comm, rank, cache, path):
    """Quantized destinations from torch: bf16/fp16/fp32 sources, float8
    payloads and fp32/uint8 scales under `<name>.scale`, checked bit for bit
    against quant_ref.quantize (torch's float8_e4m3fn cast) of the whole
    tensor; a NaN must stay a NaN (its sign is not part of the contract)."""
    import quant_ref
    with open(path) as f:
        layout = json.load(f)
    plan = reshard.compile(path, backend="mpi", cache_dir=cache)
    src, dst, want = {}, {}, {}
    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16,
              "fp32": torch.float32}
    for i, t in enumerate(layout["tensors"]):
        q = t["dst"].get("quant")
        if q is None:  # a plain tensor beside them moves unchanged
            x = torch.randn(t["shape"], generator=torch.Generator(
                ).manual_seed(i)).to(dtypes[t["dtype"]])
            for side in ("src", "dst"):
                mine = shards.local_shards(layout, t, side).get(rank)
                if mine:
                    part = x.flatten()[mine[1]].reshape(mine[0])
                    if side == "src":
                        src[t["name"]] = part
                    else:
                        dst[t["name"]] = torch.zeros_like(part)
                        want[t["name"]] = part
            continue
        x = quant_ref.test_values(t["shape"], dtypes[t["dtype"]], 100 + i, q)
        payload, scales = quant_ref.quantize(x, q)
        mine = shards.local_shards(layout, t, "src").get(rank)
        if mine:
            src[t["name"]] = x.flatten()[mine[1]].reshape(mine[0])
        mine = shards.local_shards(layout, t, "dst").get(rank)
        if mine:
            dst[t["name"]] = torch.full(mine[0], 0x5A, dtype=torch.uint8
                                        ).view(torch.float8_e4m3fn)
            want[t["name"]] = payload.flatten()[mine[1]].reshape(mine[0])
        scale_t = quant_ref.scale_tensor(t)
        assert scale_t["shape"] == list(scales.shape)
        mine = shards.local_shards(layout, scale_t, "dst").get(rank)
        if mine:
            scale = torch.full(mine[0], 0x5A, dtype=scales.dtype)
            # MX scales as torch's own E8M0 dtype, where torch has it.
            if scales.dtype == torch.uint8 and hasattr(torch,
                                                       "float8_e8m0fnu"):
                scale = scale.view(torch.float8_e8m0fnu)
            dst[scale_t["name"]] = scale
            want[scale_t["name"]] = scales.flatten()[mine[1]].reshape(mine[0])
    plan.run(src, dst, comm, verify=True)
    bad = n = 0
    for name, w in want.items():
        got = dst[name]
        n += w.numel()
        if w.dtype == torch.float8_e4m3fn:
            both_nan = torch.isnan(got.float()) & torch.isnan(w.float())
            same = got.view(torch.uint8) == w.view(torch.uint8)
            bad += int((~(same | both_nan)).sum())
        else:
            bad += int((got.view(torch.uint8) != w.view(torch.uint8)).sum())
    print(f"rank {rank}: {'ok' if not bad else 'WRONG'} {n} destination "
          f"elements, {bad} wrong", flush=True)


if __name__ == "__main__":
    main()
