"""verify=True: after a run, every destination rank checks a digest of each
tensor it received (over what its destination shard holds) against the
digest its sender computed over exactly what it sent, and every rank
raises if any pair differs anywhere.

Cost: one pass over every byte this rank sent and received (plus a host
copy of device shards for NCCL plans), and one exchange of 40-byte records
(one per stream and tensor): measured in bench/runtime_bench.py.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from . import buffers
from .errors import ReshardError

_PHASES = {-1: "local copy", 0: "from its source shard"}


def _record(d) -> Tuple:
    return (d.sender, d.receiver, d.phase, d.tensor, d.digest, d.bytes)


def verify_run(plan: Any, comm: Any, rank: int, src_bufs: List[Any],
               dst_bufs: List[Any], failure: Optional[str] = None) -> None:
    """`failure`: why this rank's run failed after the plan's agreement.
    A rank that failed, or cannot digest its shards, still joins the
    exchange (its peers would wait for it) and tells them why; then every
    rank raises."""
    records: List[Any] = []
    if failure is None:
        try:
            records = _digests(plan, rank, src_bufs, dst_bufs)
        except Exception as e:  # noqa: BLE001 - reported to every rank
            failure = (f"{plan.name}: rank {rank}: verify could not digest "
                       f"its shards: {e}")
    sent: List[Tuple[Optional[str], List[Tuple]]] = [
        (failure, []) for _ in range(comm.size)]
    received: Dict[Tuple, Tuple] = {}
    for d in records:
        r = _record(d)
        if d.direction == 0:
            sent[d.receiver][1].append(r)
        else:
            received[r[:4]] = r
    # Each receiver gets the records of what was sent to it, and every
    # rank every failure.
    try:
        incoming = comm.alltoall(sent)
    except Exception as e:  # noqa: BLE001 - keep this rank's own failure
        if failure is None:
            raise
        raise ReshardError(f"{failure}; then verify's exchange failed: "
                           f"{e}") from e
    failed = [f for f, _ in incoming if f]
    if failed:
        more = f" (and {len(failed) - 4} more)" if len(failed) > 4 else ""
        raise ReshardError("; ".join(failed[:4]) + more)
    bad: List[str] = []
    seen = 0
    for _, from_peer in incoming:
        for r in from_peer:
            seen += 1
            mine = received.get(r[:4])
            if mine is None or mine[4:] != r[4:]:
                bad.append(_describe(plan, r, mine))
    if seen != len(received):
        bad.append(f"rank {rank} received {len(received)} (stream, tensor) "
                   f"parts but its senders reported {seen}")
    everyone = [m for ms in comm.allgather(bad) for m in ms]
    if everyone:
        more = f" (and {len(everyone) - 8} more)" if len(everyone) > 8 else ""
        raise ReshardError(f"{plan.name}: verify failed: "
                           + "; ".join(everyone[:8]) + more)


def _digests(plan: Any, rank: int, src_bufs: List[Any],
             dst_bufs: List[Any]) -> List[Any]:
    if any(b is not None and b.device != "cpu" for b in src_bufs + dst_bufs):
        import torch
        torch.cuda.synchronize()  # the run was on the caller's stream
    host = [buffers.to_host(b) if b is not None else None for b in src_bufs]
    host_dst = [buffers.to_host(b) if b is not None else None
                for b in dst_bufs]
    # A rank past the plan's (a larger communicator) holds nothing, and
    # still takes part in the exchanges.
    if rank >= plan.num_ranks:
        return []
    return plan.digests(rank, host, host_dst, plan.host_workspace(rank))


def _describe(plan: Any, sent: Tuple, got: Any) -> str:
    sender, receiver, phase, tensor, digest, nbytes = sent
    name = plan.tensors[tensor]
    what = _PHASES.get(phase) if phase < 1 else f"relayed (phase {phase})"
    if got is None:
        return (f"tensor '{name}': rank {sender} sent rank {receiver} "
                f"{nbytes} bytes ({what}) that rank {receiver} does not "
                f"account for")
    return (f"tensor '{name}': rank {receiver} holds {got[5]} bytes from "
            f"rank {sender} ({what}) with digest {got[4]:016x}, but rank "
            f"{sender} sent {nbytes} bytes with digest {digest:016x}")
