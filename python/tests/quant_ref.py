"""FP8 quantization in torch, exactly as docs/Layout.md "Quantized
destinations" states it, for the tests that check the plans' kernels bit
for bit: block scaling (fp32 scales = amax / 448) and MXFP8 (E8M0 scales),
on whole logical tensors. torch's own float8_e4m3fn cast does the final
rounding (nearest, ties to even); nothing here shares code with reshard.
"""
import math


def block_sizes(quant, rank):
    if "block" in quant:
        return list(quant["block"])
    return [1] * (rank - 1) + [quant["mx"]]


def quantize(x, quant):
    """(payload as float8_e4m3fn, scales as float32 or uint8 E8M0) of the
    logical tensor `x` (bf16, fp16 or fp32)."""
    import torch
    shape = list(x.shape)
    b = block_sizes(quant, len(shape))
    nblocks = [-(-n // bb) for n, bb in zip(shape, b)]
    padded = torch.zeros([nb * bb for nb, bb in zip(nblocks, b)],
                         dtype=torch.float32)
    padded[tuple(slice(0, n) for n in shape)] = x.float()
    # [n0, b0, n1, b1, ...]: each block's elements on the odd dims.
    v = padded.reshape([d for pair in zip(nblocks, b) for d in pair])
    block_dims = tuple(range(1, 2 * len(shape), 2))
    finite = torch.where(torch.isfinite(v), v.abs(), torch.zeros_like(v))
    amax = finite.amax(dim=block_dims, keepdim=True) if shape else finite
    if "block" in quant:
        scale = amax / 448.0  # an fp32 division
        scale = torch.where(scale == 0, torch.ones_like(scale), scale)
        if quant.get("scale_fmt") == "ue8m0":
            # Up to a power of two (kept when it is one), at least 2^-127.
            m, exp = torch.frexp(scale)  # scale = m * 2^exp, 0.5 <= m < 1
            exp = torch.where(m == 0.5, exp - 1, exp).clamp(min=-127)
            scale = torch.ldexp(torch.ones_like(scale), exp.float())
        q = (v / scale).clamp(-448.0, 448.0)
        scales = scale
    else:
        _, exp = torch.frexp(amax)  # amax = m * 2^exp, 0.5 <= m < 1
        e = (exp - 1 - 8).clamp(-127, 127)
        e = torch.where(amax == 0, torch.full_like(e, -127), e)
        q = torch.ldexp(v, -e.float()).clamp(-448.0, 448.0)
        scales = (e + 127).to(torch.uint8)
    q = q.to(torch.float8_e4m3fn).reshape(padded.shape)
    q = q[tuple(slice(0, n) for n in shape)]
    return q.contiguous(), scales.reshape(nblocks).contiguous()


def scale_tensor(t):
    """The JSON tensor of a quantized tensor `t`'s scales, `<name>.scale`:
    the destination's sharding with every size (dims and fused blocks)
    divided by the block sizes, rounding up; no source."""
    q = t["dst"]["quant"]
    b = block_sizes(q, len(t["shape"]))
    spec = {k: v for k, v in t["dst"].items() if k != "quant"}
    if "blocks" in spec:
        spec["blocks"] = {d: [-(-s // b[int(d)]) for s in sizes]
                          for d, sizes in spec["blocks"].items()}
    return {"name": t["name"] + ".scale",
            "shape": [-(-n // bb) for n, bb in zip(t["shape"], b)],
            "dst": spec}


def test_values(shape, dtype, seed, quant):
    """A logical tensor with the cases the kernels must round alike:
    random magnitudes over a wide range per block, exact e4m3 midpoints
    (ties) beside 448 in a block whose scale is then 1, zeros, a whole zero
    block, subnormals of the input type, infinities and NaN."""
    import torch
    g = torch.Generator().manual_seed(seed)
    n = math.prod(shape)
    x = torch.randn(n, generator=g, dtype=torch.float32)
    x *= torch.pow(2.0, torch.randint(-30, 30, (n,), generator=g).float())
    flat = x
    b = block_sizes(quant, len(shape))
    special = torch.randint(0, 40, (n,), generator=g)
    tiny = {torch.bfloat16: 1e-39, torch.float16: 3e-8,
            torch.float32: 1e-44}[dtype]
    flat = torch.where(special == 0, torch.zeros_like(flat), flat)
    flat = torch.where(special == 1, torch.full_like(flat, tiny), flat)
    flat = torch.where(special == 2, torch.full_like(flat, -tiny), flat)
    flat = torch.where(special == 3, torch.full_like(flat, float("inf")), flat)
    flat = torch.where(special == 4, torch.full_like(flat, float("nan")), flat)
    flat = torch.where(special == 5, torch.full_like(flat, -0.0), flat)
    # NaN and Inf of the other sign: a NaN keeps its sign.
    flat = torch.where(special == 6, torch.full_like(flat, float("nan")).neg(),
                       flat)
    flat = torch.where(special == 7, torch.full_like(flat, float("-inf")), flat)
    x = flat.reshape(shape).clone()
    if shape and all(n >= bb for n, bb in zip(shape, b)):
        first = tuple(slice(0, bb) for bb in b)
        x[first] = 0.0  # a whole zero block
    if shape and all(n >= 2 * bb for n, bb in zip(shape, b)):
        # A block with amax 448 (scale 1, or e = 0 for MX) and ties: 1.0625
        # lies halfway between e4m3 1.0 and 1.125, 0.0107421875 (5.5 * 2^-9)
        # between the subnormals 5 * 2^-9 and 6 * 2^-9 (to 6, the even).
        blk = tuple(slice(bb, 2 * bb) for bb in b)
        t = torch.full(x[blk].shape, 1.0625)
        flat_t = t.view(-1)
        flat_t[0] = 448.0
        if t.numel() > 2:
            flat_t[1] = -1.0625
            flat_t[2] = 0.0107421875
        x[blk] = t
    return x.to(dtype)
