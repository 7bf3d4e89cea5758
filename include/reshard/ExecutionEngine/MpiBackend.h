/*===- MpiBackend.h - Run a reshard plan with MPI on host memory -*- C++ -*-===*
 *
 * Nonblocking point-to-point per step, one message per peer and direction,
 * cut into parts (Parts.h): segments of at least RESHARD_MPI_DIRECT_MIN
 * bytes (default 64 KiB) are MPI messages of their own, sent from the
 * source tensor and received into the destination where contiguous there,
 * the rest packed and unpacked through the workspace. A
 * step posts its receives (unless the step before posted them) and its
 * sends and, in a plan with receives_ahead, the next step's receives, and
 * waits for its own: a peer a step ahead then finds its receive posted.
 * Before any
 * byte moves, every rank agrees on the plan fingerprint and learns whether
 * any rank rejected its arguments, so all ranks fail together or not at
 * all (two reductions: the second tells a rank that comes late whether
 * its peers gave up on it). Waits poll with MPI_Testall against a deadline:
 * RESHARD_TIMEOUT_SECONDS in the environment (default: wait forever) turns a
 * dead or stalled peer into RESHARD_ERR_TIMEOUT. After a timeout the
 * communicator is unusable, and the workspace and the shards must stay
 * allocated and unchanged (a send still pending may read the workspace, or
 * a shard it sends in place): abort the job (MPI_Abort) or at least leave
 * the communicator alone.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_MPIBACKEND_H
#define RESHARD_EXECUTIONENGINE_MPIBACKEND_H

#include "reshard/ExecutionEngine/Digests.h"
#include "reshard/ExecutionEngine/Engine.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <thread>
#include <vector>

namespace reshard {
namespace engine {
namespace mpi {

/* Messages above this many bytes travel as several MPI messages (MPI counts
 * are ints); MPI keeps their order between one pair of ranks and one tag. */
const int64_t kMaxChunk = int64_t(1) << 30;

/* Cancels and completes receives still pending, so nothing lands in the
 * workspace later. */
inline void cancel_receives(std::vector<MPI_Request> &reqs) {
  for (size_t i = 0; i < reqs.size(); ++i)
    if (reqs[i] != MPI_REQUEST_NULL) {
      MPI_Cancel(&reqs[i]);
      MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    }
  reqs.clear();
}

/* Gives up a step's requests, the first `nrecv` of them receives: a
 * cancelled receive completes locally, so nothing lands in the caller's
 * buffers later; a send may not (Open MPI does not cancel sends), so it
 * is released instead of waited for, and may still read its buffer: the
 * workspace, or (a part sent in place) a source or destination shard. */
inline void abandon(std::vector<MPI_Request> &reqs, size_t nrecv) {
  for (size_t i = 0; i < reqs.size(); ++i)
    if (reqs[i] != MPI_REQUEST_NULL) {
      MPI_Cancel(&reqs[i]);
      if (i < nrecv)
        MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
      else
        MPI_Request_free(&reqs[i]);
    }
  reqs.clear();
}

/* The agreement's rounds, as wait_all's `step` for its messages. */
enum { kAgreementRound1 = -1, kAgreementRound2 = -2 };

/* Waits for `reqs`, the first `nrecv` of them receives. On the deadline,
 * receives (`ahead`'s too: the next step's, posted early) are cancelled
 * and completed (so nothing lands in the caller's buffers later) and sends
 * are cancelled and released. */
inline int wait_all(const Plan &plan, int rank, std::vector<MPI_Request> &reqs,
                    size_t nrecv, int64_t step, char *err, size_t errlen,
                    std::vector<MPI_Request> *ahead = 0) {
  double limit = timeout_seconds();
  auto start = std::chrono::steady_clock::now();
  while (true) {
    int done = 0;
    if (MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done,
                    MPI_STATUSES_IGNORE) != MPI_SUCCESS)
      return fail(err, errlen, RESHARD_ERR_COMM,
                  "%s: rank %d: MPI failed in step %lld", plan.name, rank,
                  static_cast<long long>(step));
    if (done)
      return RESHARD_OK;
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    if (limit > 0 && waited.count() > limit) {
      /* Point-to-point requests can be cancelled; a collective cannot. */
      if (step >= 0)
        abandon(reqs, nrecv);
      if (ahead)
        cancel_receives(*ahead);
      if (step == kAgreementRound2)
        return fail(err, errlen, RESHARD_ERR_TIMEOUT,
                    "%s: rank %d: not every rank finished the plan "
                    "agreement's second round within %g s (a peer stalled "
                    "between its rounds, and may still run the plan)",
                    plan.name, rank, limit);
      if (step < 0)
        return fail(err, errlen, RESHARD_ERR_TIMEOUT,
                    "%s: rank %d: not every rank joined the plan agreement "
                    "within %g s (a peer died or stalled)",
                    plan.name, rank, limit);
      return fail(err, errlen, RESHARD_ERR_TIMEOUT,
                  "%s: rank %d: step %lld did not complete within %g s (a "
                  "peer died or stalled)",
                  plan.name, rank, static_cast<long long>(step), limit);
    }
  }
}

/* Posts the agreement's second round, a one-word MAX reduction of "gave
 * up" (`words[0]` in, `words[1]` out): every rank that finished or timed
 * out in the first posts it, so every call posts two collectives and the
 * next one (python's verify exchange) pairs with its peers'. */
inline int post_second_round(const Plan &plan, int rank, MPI_Comm comm,
                             unsigned long long *words, MPI_Request *req,
                             char *err, size_t errlen) {
  if (MPI_Iallreduce(words, words + 1, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, comm,
                     req) == MPI_SUCCESS)
    return RESHARD_OK;
  return fail(err, errlen, RESHARD_ERR_COMM,
              "%s: rank %d: MPI_Iallreduce of the plan agreement failed",
              plan.name, rank);
}

/* Every rank learns whether all run the same plan and all accepted their
 * arguments; `status` is this rank's own verdict. Two rounds: a rank that
 * comes after its peers timed out in the first finds it complete (a
 * collective cannot be cancelled) and learns from the second that they
 * gave up, so it moves nothing either (with one round it went on, and a
 * rank that only sends returned 0, its messages left for the next call). */
inline int agree(const Plan &plan, int rank, int status, unsigned flags,
                 int64_t direct_min, MPI_Comm comm, char *err, size_t errlen) {
  /* On the heap: a collective cannot be cancelled, so after a timeout MPI
   * may still write the results when the late rank arrives. Those 160
   * bytes are then left allocated on purpose. */
  unsigned long long *words = new unsigned long long[2 * kAgreementWords + 2];
  unsigned long long *in = words, *out = words + kAgreementWords;
  unsigned long long *second = words + 2 * kAgreementWords;
  agreement_words(plan, status, flags, in, direct_min);
  std::vector<MPI_Request> req(1, MPI_REQUEST_NULL);
  if (MPI_Iallreduce(in, out, kAgreementWords, MPI_UNSIGNED_LONG_LONG, MPI_MAX,
                     comm, &req[0]) != MPI_SUCCESS) {
    delete[] words;
    return fail(err, errlen, RESHARD_ERR_COMM,
                "%s: rank %d: MPI_Iallreduce of the plan fingerprint failed",
                plan.name, rank);
  }
  /* A rank that never arrives is a timeout, not a hang. */
  if (int waited =
          wait_all(plan, rank, req, 0, kAgreementRound1, err, errlen)) {
    /* Tell a late peer; the request stays pending (a nonblocking
     * collective's may be neither freed nor cancelled). */
    MPI_Request left = MPI_REQUEST_NULL;
    second[0] = 1;
    post_second_round(plan, rank, comm, second, &left, 0, 0);
    return waited;
  }
  int verdict = agreement_verdict(plan, rank, status, flags, out, err, errlen,
                                  direct_min);
  second[0] = 0;
  req[0] = MPI_REQUEST_NULL;
  if (int rc =
          post_second_round(plan, rank, comm, second, &req[0], err, errlen)) {
    delete[] words;
    return rc;
  }
  if (int waited = wait_all(plan, rank, req, 0, kAgreementRound2, err, errlen))
    return waited; /* `words` stays allocated: MPI may still write it */
  unsigned long long gave_up = second[1];
  delete[] words;
  if (verdict != RESHARD_OK)
    return verdict;
  if (gave_up)
    return fail(err, errlen, RESHARD_ERR_TIMEOUT,
                "%s: rank %d: every other rank joined the plan agreement, "
                "but some gave up waiting for this one first (their "
                "RESHARD_TIMEOUT_SECONDS passed); nothing was moved",
                plan.name, rank);
  return RESHARD_OK;
}

/* `rejected`, when not null, is why the caller refuses its own arguments:
 * the rank joins the agreement only to make every rank fail
 * (<plan>_reject). `flags` (RESHARD_RUN_*) must be the same on every rank. */
inline int run(const Plan &plan, int rank, void *const *src, void *const *dst,
               MPI_Comm comm, void *workspace, size_t workspace_size, char *err,
               size_t errlen, const char *rejected = 0, unsigned flags = 0) {
  if (err && errlen)
    err[0] = '\0';
  int size = 0, me = -1;
  /* MPI calls before MPI_Init or after MPI_Finalize abort the process;
   * these two may be called at any time. */
  int initialized = 0, finalized = 0;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS ||
      MPI_Finalized(&finalized) != MPI_SUCCESS || !initialized || finalized)
    return fail(err, errlen, RESHARD_ERR_COMM, "%s: MPI is %s", plan.name,
                finalized ? "finalized already"
                          : "not initialized (call "
                            "MPI_Init first)");
  if (comm == MPI_COMM_NULL) /* querying it aborts the job */
    return fail(err, errlen, RESHARD_ERR_COMM,
                "%s: the communicator is MPI_COMM_NULL", plan.name);
  if (MPI_Comm_size(comm, &size) != MPI_SUCCESS ||
      MPI_Comm_rank(comm, &me) != MPI_SUCCESS)
    return fail(err, errlen, RESHARD_ERR_COMM,
                "%s: cannot query the communicator", plan.name);
  int status = RESHARD_OK;
  if (int rc =
          check_call(plan, rank, me, size, src, dst, workspace, workspace_size,
                     err, errlen, &status, rejected, flags))
    return rc;
  int64_t direct_min = kDirectMin;
  if (!parse_direct_min(std::getenv("RESHARD_MPI_DIRECT_MIN"), &direct_min) &&
      status == RESHARD_OK)
    status = fail(err, errlen, RESHARD_ERR_ARGS,
                  "%s: rank %d: RESHARD_MPI_DIRECT_MIN='%.64s' is not a "
                  "number of bytes from 0 to 2^40 (unset it for %lld)",
                  plan.name, me, std::getenv("RESHARD_MPI_DIRECT_MIN"),
                  static_cast<long long>(kDirectMin));
  int rc = agree(plan, me, status, flags, direct_min, comm, err, errlen);
  if (rc)
    return rc;
  /* A test hook: stall this rank for the given seconds after the
   * agreement, as a peer that dies or hangs mid-plan would (the steps'
   * deadlines, and receives posted ahead being cancelled, need one). */
  if (const char *pause = std::getenv("RESHARD_TEST_PAUSE_AFTER_AGREEMENT"))
    if (pause[0] >= '1' && pause[0] <= '9' && pause[1] == '\0')
      std::this_thread::sleep_for(std::chrono::seconds(pause[0] - '0'));
  const RankProgram *p = program(plan, rank);
  if (!p)
    return RESHARD_OK;
  uint8_t *ws = static_cast<uint8_t *>(workspace);
  /* The step's requests, receives first, and the next step's receives
   * (posted only when that step has receives, so it is never skipped). */
  std::vector<MPI_Request> reqs, ahead_reqs;
  HostMover mover;
  /* A test hook: corrupt one byte in flight (the first received), so that
   * tests can show that verify=True notices; only the value 1 sets it. */
  const char *hook = std::getenv("RESHARD_TEST_FLIP_RECEIVED_BYTE");
  bool flip = hook && hook[0] == '1' && hook[1] == '\0';
  ProgramRunner<HostMover> runner(plan, *p, src, dst, ws, mover);
  runner.cut_into_parts(direct_min > 0 ? direct_min : INT64_MAX, kMaxChunk);
  runner.overlap_copies();
  /* Posts one MPI message per part of each of `list`. */
  auto post = [&](int64_t step, const std::vector<Message> &list,
                  const std::vector<std::vector<Part>> &parts, bool send,
                  std::vector<MPI_Request> &out) -> int {
    int tag = static_cast<int>(step % 32768);
    for (size_t m = 0; m < list.size(); ++m)
      for (size_t k = 0; k < parts[m].size(); ++k) {
        const Part &part = parts[m][k];
        int peer = static_cast<int>(list[m].peer);
        int n = static_cast<int>(part.bytes);
        out.push_back(MPI_REQUEST_NULL);
        int ok =
            send
                ? MPI_Isend(part.at, n, MPI_BYTE, peer, tag, comm, &out.back())
                : MPI_Irecv(part.at, n, MPI_BYTE, peer, tag, comm, &out.back());
        if (ok != MPI_SUCCESS)
          return fail(err, errlen, RESHARD_ERR_COMM,
                      "%s: rank %d: %s failed in step %lld", plan.name, rank,
                      send ? "MPI_Isend" : "MPI_Irecv",
                      static_cast<long long>(step));
      }
    return RESHARD_OK;
  };
  rc = run_steps(runner, [&](int64_t step) -> int {
    reqs.clear();
    reqs.swap(ahead_reqs); /* posted by the step before */
    if (reqs.empty())
      if (int bad = post(step, runner.recvs, runner.recvParts, false, reqs))
        return bad;
    size_t nrecv_reqs = reqs.size();
    int bad = post(step, runner.sends, runner.sendParts, true, reqs);
    if (!bad)
      bad = post(step + 1, runner.ahead, runner.aheadParts, false, ahead_reqs);
    if (!bad) /* the first step's messages move meanwhile */
      bad = runner.copies();
    if (bad) { /* nothing posted may land later (ahead_reqs: below) */
      abandon(reqs, nrecv_reqs);
      return bad;
    }
    int waited =
        wait_all(plan, rank, reqs, nrecv_reqs, step, err, errlen, &ahead_reqs);
    if (!waited && flip && !runner.recvParts.empty() &&
        !runner.recvParts[0].empty()) {
      runner.recvParts[0][0].at[0] ^= 0x10; /* the first byte received */
      flip = false;
    }
    return waited;
  });
  /* A failed step leaves no receive pending into the workspace. */
  cancel_receives(ahead_reqs);
  return rc;
}

} // namespace mpi
} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_MPIBACKEND_H */
