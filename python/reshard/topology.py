"""Cluster topology presets (docs/Layout.md) and rank placement."""
from __future__ import annotations

import math
from typing import Any, Dict, Mapping, Union

from .errors import ReshardError

# Per-GPU figures. dgx-h100: 8 H100 per node and NVLink domain, one 400 Gb/s
# (50 GB/s) NIC per GPU, NVLink 4 at 450 GB/s per direction. gb200-nvl72:
# 4 GB200 per compute tray, 72 GPUs in one NVLink domain, NVLink 5 at
# 900 GB/s, one 400 Gb/s NIC per GPU. gb200-nvl64: the same racks with 64
# of each 72 GPUs in use (NCCL M2N's benchmark setup), so that power-of-two
# layouts fill whole domains.
TOPOLOGIES: Dict[str, Dict[str, float]] = {
    "dgx-h100": {"gpus_per_node": 8, "nvl_domain_size": 8,
                 "nic_GBps_per_gpu": 50, "nvlink_GBps_per_gpu": 450,
                 "nic_latency_us": 5, "nvlink_latency_us": 1},
    "gb200-nvl72": {"gpus_per_node": 4, "nvl_domain_size": 72,
                    "nic_GBps_per_gpu": 50, "nvlink_GBps_per_gpu": 900,
                    "nic_latency_us": 5, "nvlink_latency_us": 1},
    "gb200-nvl64": {"gpus_per_node": 4, "nvl_domain_size": 64,
                    "nic_GBps_per_gpu": 50, "nvlink_GBps_per_gpu": 900,
                    "nic_latency_us": 5, "nvlink_latency_us": 1},
}

_REQUIRED = ("gpus_per_node", "nvl_domain_size", "nic_GBps_per_gpu",
             "nvlink_GBps_per_gpu")
_OPTIONAL = ("nic_latency_us", "nvlink_latency_us")
# Bandwidths (GB/s) and non-zero latencies (us): kMin/kMaxBandwidthGBps and
# kMin/kMaxLatencyUs of include/reshard/Layout/Layout.h.
_LOW, _HIGH = 1e-6, 1e9


def _check_number(key, v):
    """GPU counts are positive integers, bandwidths numbers in [1e-6, 1e9]
    GB/s and latencies 0 or numbers in [1e-6, 1e9] us."""
    if key in ("gpus_per_node", "nvl_domain_size"):
        ok, what = isinstance(v, int) and v > 0, "a positive integer"
    elif key in _REQUIRED:
        ok, what = isinstance(v, (int, float)) and v > 0, "a number > 0"
    else:
        ok, what = isinstance(v, (int, float)) and v >= 0, "a number >= 0"
    if not ok or isinstance(v, bool) or not math.isfinite(v):
        raise ReshardError(f"topology: {key}={v!r} is not {what}")
    # The compiler's ranges (Layout.h), where modelled times stay finite.
    if key in _REQUIRED[2:] and not _LOW <= v <= _HIGH:
        raise ReshardError(f"topology: {key}={v!r} is outside "
                           f"[{_LOW:g}, {_HIGH:g}] GB/s")
    if key in _OPTIONAL and v != 0 and not _LOW <= v <= _HIGH:
        raise ReshardError(f"topology: {key}={v!r} is neither 0 nor in "
                           f"[{_LOW:g}, {_HIGH:g}] us")


def get_topology(topology: Union[str, Mapping[str, Any]]
                 ) -> Dict[str, Any]:
    """A preset name or a topology dict -> a validated dict (a copy)."""
    if isinstance(topology, str):
        if topology not in TOPOLOGIES:
            raise ReshardError(f"unknown topology {topology!r} (presets: "
                               f"{', '.join(sorted(TOPOLOGIES))})")
        return dict(TOPOLOGIES[topology])
    if not isinstance(topology, dict):
        raise ReshardError("topology: give a preset name or a JSON object")
    topo = dict(topology)
    missing = [k for k in _REQUIRED if k not in topo]
    if missing:
        raise ReshardError(f"topology: missing {', '.join(missing)}")
    for k in _REQUIRED + _OPTIONAL:
        if k in topo:
            _check_number(k, topo[k])
    if topo["nvl_domain_size"] % topo["gpus_per_node"]:
        raise ReshardError("topology: nvl_domain_size must be a multiple of "
                           "gpus_per_node")
    return topo


def nvl_domain(rank: int, topology: Mapping[str, Any]) -> int:
    """Global rank r is in NVLink domain r // nvl_domain_size
    (docs/Layout.md)."""
    return rank // topology["nvl_domain_size"]
