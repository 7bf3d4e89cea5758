/*===- ErrorCodes.h - What generated reshard plans return --------*- C -*-===*
 *
 * C-compatible: the generated plan headers include it, so C and C++ callers
 * of <plan>_run see the same names. The message written to `err` says more.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_ERRORCODES_H
#define RESHARD_EXECUTIONENGINE_ERRORCODES_H

#include <stdint.h>

enum {
  /* Success. */
  RESHARD_OK = 0,
  /* Rank outside the plan's communicator, or the communicator is smaller
   * than the plan. */
  RESHARD_ERR_RANK = 1,
  /* A shard pointer (or the array of them) the rank needs is null. */
  RESHARD_ERR_NULL = 2,
  /* Workspace null or smaller than <plan>_workspace_bytes(rank). */
  RESHARD_ERR_WORKSPACE = 3,
  /* Ranks run different plans (fingerprints differ), pass different
   * flags or set RESHARD_TIMEOUT_SECONDS differently, or another rank
   * rejected its arguments; detected before any byte moves. */
  RESHARD_ERR_MISMATCH = 4,
  /* The MPI or NCCL library reported an error. */
  RESHARD_ERR_COMM = 5,
  /* A peer did not answer within the deadline. */
  RESHARD_ERR_TIMEOUT = 6,
  /* A CUDA call failed. */
  RESHARD_ERR_CUDA = 7,
  /* This rank's arguments are refused: the caller rejected them
   * (<plan>_reject), or passed a flag <plan>_run_flags does not know, a
   * quantized shard off its alignment, buffers that share memory with a
   * destination or the workspace, or RESHARD_TIMEOUT_SECONDS that is not
   * a number of seconds above 0. This rank returns it, every other rank
   * RESHARD_ERR_MISMATCH, and nothing moves. */
  RESHARD_ERR_ARGS = 8
};

/* Flags of <plan>_run_flags, which every rank must pass alike (the
 * agreement checks it before any byte moves, RESHARD_ERR_MISMATCH
 * otherwise): RESHARD_RUN_VERIFY says the caller exchanges digests after
 * the run (python/reshard's verify=True), so that a rank asking for it
 * alone fails at once instead of waiting for peers that never join. */
enum { RESHARD_RUN_VERIFY = 1 };

/* One digest <plan>_digests reports: of the bytes of `tensor` that rank
 * `sender` sent rank `receiver` in one stream (phase 0 from its source
 * shard, 1 a relay from its destination shard, -1 a local copy), computed
 * by the sender over what it packed (`direction` 0) or by the receiver
 * over what its destination shard holds after the run (`direction` 1).
 * Equal bytes give equal digests; a changed byte changes it. */
typedef struct reshard_digest {
  int32_t sender, receiver, phase, tensor, direction, reserved;
  uint64_t digest;
  int64_t bytes;
} reshard_digest;

#endif /* RESHARD_EXECUTIONENGINE_ERRORCODES_H */
