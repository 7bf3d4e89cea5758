"""The traffic of a lowered plan: a source x destination byte matrix and
per-NIC load against the busiest-NIC lower bound, drawn with matplotlib.

Bytes come from the lowered runtime program (plan.mlir): every stream
`reshard_rt.send to P phase H start S quota Q bytes N ...` inside
`reshard_rt.rank R` is N bytes from R to P; local copies (the diagonal) come
from the report's per-rank table.
"""
import re

from .topology import nvl_domain

_RANK = re.compile(r"\s*reshard_rt\.rank (\d+) ")
_SEND = re.compile(r"\s*reshard_rt\.send to (\d+) phase \d+ start \d+ "
                   r"quota \d+ bytes (\d+)")
_PLAN = re.compile(r"\s*reshard_rt\.plan .*num_ranks = (\d+)")


def traffic(plan_path, report=None):
    """(num_ranks, {(src, dst): bytes}) from a lowered plan."""
    pairs, rank, n = {}, None, 0
    with open(plan_path) as f:
        for line in f:
            if "reshard_rt." not in line:
                continue
            m = _SEND.match(line)
            if m:
                key = (rank, int(m.group(1)))
                pairs[key] = pairs.get(key, 0) + int(m.group(2))
                continue
            m = _RANK.match(line)
            if m:
                rank = int(m.group(1))
                continue
            m = _PLAN.match(line)
            if m:
                n = int(m.group(1))
    if report is not None:
        for r in report.plan.per_rank:
            if r.local.bytes_out:
                pairs[(r.rank, r.rank)] = r.local.bytes_out
    return n, pairs


def nic_load(pairs, topology):
    """{rank: (network bytes out, network bytes in)}: messages that leave
    the sender's NVLink domain."""
    out = {}
    for (s, d), b in pairs.items():
        if nvl_domain(s, topology) == nvl_domain(d, topology):
            continue
        o = out.setdefault(s, [0, 0])
        o[0] += b
        i = out.setdefault(d, [0, 0])
        i[1] += b
    return {r: tuple(v) for r, v in out.items()}


def draw(plan_path, report, paths, title=None):
    """Writes the figure to each path (.png or .svg)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    topo = report.topology if report.topology.get("present", True) else {
        "nvl_domain_size": 1}
    n, pairs = traffic(plan_path, report)
    n = max([n] + [max(k) + 1 for k in pairs])
    grid = [[float("nan")] * n for _ in range(n)]
    for (s, d), b in pairs.items():
        grid[s][d] = b
    load = nic_load(pairs, topo)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 5.5),
                                 gridspec_kw={"width_ratios": [1, 1.3]})
    vals = [b for b in pairs.values() if b > 0]
    norm = LogNorm(vmin=min(vals), vmax=max(vals)) if vals else None
    im = ax.imshow(grid, norm=norm, cmap="viridis", interpolation="nearest",
                   origin="upper")
    ax.set_xlabel("destination rank")
    ax.set_ylabel("source rank")
    ax.set_title("bytes sent (diagonal: local copies)")
    fig.colorbar(im, ax=ax, label="bytes")
    ranks = list(range(n))
    outs = [load.get(r, (0, 0))[0] for r in ranks]
    ins = [load.get(r, (0, 0))[1] for r in ranks]
    bx.bar([r - 0.2 for r in ranks], outs, width=0.4, label="NIC out",
           color="tab:blue")
    bx.bar([r + 0.2 for r in ranks], ins, width=0.4, label="NIC in",
           color="tab:orange")
    bound = report.lower_bound_busiest_nic_bytes
    bx.axhline(bound, color="red", linestyle="--",
               label=f"busiest-NIC lower bound ({bound:,} B)")
    # Headroom above the bars for the legend.
    bx.set_ylim(0, 1.25 * max([bound, 1] + outs + ins))
    bx.set_xlabel("rank")
    bx.set_ylabel("network bytes")
    bx.set_title("per-NIC load (busiest %s B)"
                 % f"{report.plan.busiest_nic_bytes:,}")
    bx.legend(loc="upper right", fontsize="small")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    for p in paths:
        fig.savefig(p, dpi=110)
    plt.close(fig)
    return pairs
