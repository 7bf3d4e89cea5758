"""The one-rank NCCL plan through python/reshard's runtime on a GPU:
Plan.load of the plan built as a shared library, a NcclComm of one rank,
Plan.run on torch CUDA tensors read from the source shard files, with
verify=True; writes every destination tensor to DST/rank0.<name>.bin for
scripts/gpu-check.sh to compare with reshard-run's bytes (sha256).

  python3 torch_check.py LIBPLAN.so SRC DST
"""
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import reshard  # noqa: E402


def main():
    lib, src_dir, dst_dir = sys.argv[1:4]
    plan = reshard.Plan.load(lib)
    store = tempfile.mktemp(prefix="reshard-store-")
    dist.init_process_group("gloo", init_method=f"file://{store}", rank=0,
                            world_size=1)
    comm = reshard.NcclComm()
    src, dst = {}, {}
    for name in plan.tensors:
        for side, out in (("src", src), ("dst", dst)):
            shape = plan.local_shape(name, 0, side)
            if shape is None:
                continue
            # Per side: an FP8 payload's source is bf16/fp16/fp32, its
            # scales fp32 or uint8 (E8M0) with no source.
            dtype = getattr(torch, {"bf16": "bfloat16", "fp16": "float16",
                                    "fp32": "float32",
                                    "fp8e4m3": "float8_e4m3fn",
                                    "uint8": "uint8"}[plan.dtype(name, side)])
            if side == "src":
                with open(os.path.join(src_dir, f"rank0.{name}.bin"),
                          "rb") as f:
                    raw = torch.frombuffer(bytearray(f.read()),
                                           dtype=torch.uint8)
                out[name] = raw.view(dtype).reshape(shape).cuda()
            else:
                out[name] = torch.empty(shape, dtype=dtype, device="cuda")
    plan.run(src, dst, comm, verify=True)
    torch.cuda.synchronize()
    os.makedirs(dst_dir, exist_ok=True)
    for name, t in dst.items():
        with open(os.path.join(dst_dir, f"rank0.{name}.bin"), "wb") as f:
            f.write(t.view(torch.uint8).cpu().numpy().tobytes())
    widened = check_wider_destinations(plan, comm, src, dst)
    comm.destroy()
    dist.destroy_process_group()
    print(f"torch-check: {len(dst)} tensors through Plan.run on "
          f"{torch.cuda.get_device_name()}, verify=True passed; "
          f"{widened} bf16 tensors into fp32 destinations on a side stream "
          f"equal the bf16 run widened")


def check_wider_destinations(plan, comm, src, dst):
    """The run again with fp32 destinations for the bf16 tensors (vLLM's
    GLM-4.5 router gate), on a stream of its own: each must hold the bf16
    run's values widened, bit for bit."""
    wide = {n: torch.full(t.shape, float("nan"), device="cuda")
            if t.dtype == torch.bfloat16 else torch.empty_like(t)
            for n, t in dst.items()}
    side = torch.cuda.Stream()
    plan.run(src, wide, comm, stream=side, verify=True)
    side.synchronize()
    names = [n for n, t in dst.items() if t.dtype == torch.bfloat16]
    bad = [n for n in names if not torch.equal(
        wide[n].view(torch.int32), dst[n].float().view(torch.int32))]
    if bad or not names:
        raise SystemExit(f"torch-check: fp32 destinations differ from the "
                         f"bf16 run widened: {bad or 'no bf16 tensor'}")
    return len(names)


if __name__ == "__main__":
    main()
