/*===- NcclBackend.h - Run a reshard plan with NCCL and CUDA ----*- C++ -*-===*
 *
 * Everything is enqueued on the caller's stream: local copies and packing
 * as cudaMemcpy2DAsync of strided boxes into the (device) workspace, one
 * ncclGroupStart/End per step with one ncclSend/ncclRecv per peer and
 * direction (bytes as ncclUint8, so bf16 and fp8 move unchanged), then
 * unpacking; Engine.h's run_program walks the steps. Within a step,
 * operations are issued in the same order on every rank: ascending peer,
 * starting after the rank's own number, so that senders do not all start
 * with the same receiver.
 *
 * The one synchronisation: before any byte moves, a 3-word ncclAllReduce
 * (plan fingerprint, its complement, "my arguments are bad") and a wait on
 * the stream, so that a rank running another plan, or a rank with bad
 * arguments, makes every rank return an error instead of hanging.
 *
 * Faults: waits watch ncclCommGetAsyncError and abort the communicator
 * (ncclCommAbort) on an asynchronous error. With RESHARD_TIMEOUT_SECONDS set,
 * every step is also waited for against that deadline (which makes steps
 * synchronous: the price of a deadline); without it, steps stay
 * asynchronous. Communicators created nonblocking (config.blocking = 0) are
 * supported: ncclInProgress is polled until the operations are enqueued. A
 * blocking communicator may block inside NCCL (connection setup) before any
 * deadline is looked at: make it nonblocking where the deadline must hold.
 * After return code 6, or 5 from an asynchronous error, the communicator has
 * been aborted: neither use nor destroy it. Do not call the plan inside an
 * ncclGroupStart/End of your own or while a CUDA graph is being captured.
 *
 * The call runs on the communicator's device (ncclCommCuDevice), whatever
 * the calling thread's current device, and restores the latter. Copies of
 * rows further apart than cudaDevAttrMaxPitch go row by row.
 *
 *===----------------------------------------------------------------------===*/
#ifndef RESHARD_EXECUTIONENGINE_NCCLBACKEND_H
#define RESHARD_EXECUTIONENGINE_NCCLBACKEND_H

#include "reshard/ExecutionEngine/Digests.h"
#include "reshard/ExecutionEngine/Engine.h"
#include "reshard/ExecutionEngine/QuantizeKernels.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

namespace reshard {
namespace engine {
namespace nccl {

inline int cuda_failed(const Plan &plan, int rank, cudaError_t e,
                       const char *what, char *err, size_t errlen) {
  return fail(err, errlen, RESHARD_ERR_CUDA, "%s: rank %d: %s: %s", plan.name,
              rank, what, cudaGetErrorString(e));
}

inline int nccl_failed(const Plan &plan, int rank, ncclResult_t r,
                       const char *what, char *err, size_t errlen) {
  return fail(err, errlen, RESHARD_ERR_COMM, "%s: rank %d: %s: %s", plan.name,
              rank, what, ncclGetErrorString(r));
}

/* Waits for `stream` while watching the communicator: an asynchronous NCCL
 * error, or (with RESHARD_TIMEOUT_SECONDS) a deadline, aborts the
 * communicator (ncclCommAbort) and returns an error instead of hanging. */
inline int wait_stream(const Plan &plan, int rank, ncclComm_t comm,
                       cudaStream_t stream, const char *what, char *err,
                       size_t errlen) {
  double limit = timeout_seconds();
  auto start = std::chrono::steady_clock::now();
  while (true) {
    ncclResult_t async = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(comm, &async);
    if (r != ncclSuccess)
      return nccl_failed(plan, rank, r, "ncclCommGetAsyncError", err, errlen);
    if (async != ncclSuccess && async != ncclInProgress) {
      ncclCommAbort(comm);
      return nccl_failed(plan, rank, async, what, err, errlen);
    }
    cudaError_t q = cudaStreamQuery(stream);
    if (q == cudaSuccess && async == ncclSuccess)
      return RESHARD_OK;
    if (q != cudaSuccess && q != cudaErrorNotReady)
      return cuda_failed(plan, rank, q, what, err, errlen);
    std::chrono::duration<double> waited =
        std::chrono::steady_clock::now() - start;
    if (limit > 0 && waited.count() > limit) {
      ncclCommAbort(comm);
      return fail(err, errlen, RESHARD_ERR_TIMEOUT,
                  "%s: rank %d: %s did not complete within %g s (a peer died "
                  "or stalled); the communicator was aborted",
                  plan.name, rank, what, limit);
    }
    std::this_thread::yield();
  }
}

/* Polls a nonblocking communicator until the operations it accepted with
 * ncclInProgress have been enqueued on their streams (or failed). Nothing
 * may be enqueued after them on the stream before this returns. */
inline ncclResult_t settle(ncclComm_t comm, ncclResult_t r) {
  while (r == ncclInProgress) {
    ncclResult_t q = ncclCommGetAsyncError(comm, &r);
    if (q != ncclSuccess)
      return q;
  }
  return r;
}

/* Makes the communicator's device current for the duration of a call. */
struct DeviceGuard {
  int previous = -1;
  cudaError_t set(ncclComm_t comm, int *device) {
    if (ncclCommCuDevice(comm, device) != ncclSuccess)
      return cudaErrorInvalidDevice;
    cudaError_t e = cudaGetDevice(&previous);
    if (e != cudaSuccess)
      return e;
    return previous == *device ? cudaSuccess : cudaSetDevice(*device);
  }
  ~DeviceGuard() {
    int now = -1;
    if (previous >= 0 && cudaGetDevice(&now) == cudaSuccess && now != previous)
      cudaSetDevice(previous);
  }
};

/* The agreement's words, on the device and in pinned host memory, one
 * pair per thread and device: agree() waits before it returns, so calls
 * from one thread never overlap, and calls from several threads (other
 * communicators, other streams) never share words. Pinned, so that the
 * copy back is asynchronous and the wait can watch the deadline. Left
 * allocated at exit, like the MPI backend's (a collective cannot be
 * cancelled, and freeing would synchronise the device). */
struct AgreementWords {
  unsigned long long *device = nullptr, *host = nullptr;
};
inline cudaError_t agreement_buffer(int device, AgreementWords *out) {
  static thread_local AgreementWords words[64];
  if (device < 0 || device >= 64)
    return cudaErrorInvalidDevice;
  AgreementWords &w = words[device];
  if (!w.host) {
    cudaError_t e =
        cudaMallocHost(reinterpret_cast<void **>(&w.host),
                       kAgreementWords * sizeof(unsigned long long));
    if (e != cudaSuccess)
      return e;
  }
  if (!w.device) {
    cudaError_t e = cudaMalloc(reinterpret_cast<void **>(&w.device),
                               kAgreementWords * sizeof(unsigned long long));
    if (e != cudaSuccess)
      return e;
  }
  *out = w;
  return cudaSuccess;
}

/* cudaDevAttrMaxPitch of the current device (2^31 - 1 on Hopper). */
inline size_t max_pitch() {
  static thread_local int cached_device = -1;
  static thread_local size_t cached = 0;
  int device = 0, pitch = 0;
  if (cudaGetDevice(&device) != cudaSuccess)
    return 0;
  if (device != cached_device) {
    cached = cudaDeviceGetAttribute(&pitch, cudaDevAttrMaxPitch, device) ==
                     cudaSuccess
                 ? static_cast<size_t>(pitch)
                 : 0;
    cached_device = device;
  }
  return cached;
}

/* Enqueues a strided copy: `loops` are (count, stride_a, stride_b) triples
 * when `width` is 3, or (count, stride) pairs with the other side packed
 * contiguously when `width` is 2 (`packed` says which side). */
inline cudaError_t copy_runs(uint8_t *to, const uint8_t *from, int64_t run,
                             const int64_t *loops, int64_t n, int width,
                             int64_t from_stride_at, int64_t to_stride_at,
                             cudaStream_t stream) {
  if (run == 0)
    return cudaSuccess;
  if (n == 0)
    return cudaMemcpyAsync(to, from, run, cudaMemcpyDeviceToDevice, stream);
  if (n == 1) {
    int64_t count = loops[0];
    int64_t spitch = from_stride_at ? loops[from_stride_at] : run;
    int64_t dpitch = to_stride_at ? loops[to_stride_at] : run;
    if (count <= 0)
      return cudaSuccess;
    if (count == 1 || (spitch == run && dpitch == run)) /* contiguous */
      return cudaMemcpyAsync(to, from, run * count, cudaMemcpyDeviceToDevice,
                             stream);
    size_t limit = max_pitch();
    if (static_cast<size_t>(spitch) <= limit &&
        static_cast<size_t>(dpitch) <= limit)
      return cudaMemcpy2DAsync(to, dpitch, from, spitch, run, count,
                               cudaMemcpyDeviceToDevice, stream);
    for (int64_t i = 0; i < count; ++i) { /* rows over the pitch limit */
      cudaError_t e = cudaMemcpyAsync(to + i * dpitch, from + i * spitch, run,
                                      cudaMemcpyDeviceToDevice, stream);
      if (e != cudaSuccess)
        return e;
    }
    return cudaSuccess;
  }
  /* More loops: iterate the outer ones on the host. */
  int64_t inner = run;
  for (int64_t i = 1; i < n; ++i)
    inner *= loops[i * width];
  for (int64_t i = 0; i < loops[0]; ++i) {
    const uint8_t *f =
        from + i * (from_stride_at ? loops[from_stride_at] : inner);
    uint8_t *t = to + i * (to_stride_at ? loops[to_stride_at] : inner);
    cudaError_t e = copy_runs(t, f, run, loops + width, n - 1, width,
                              from_stride_at, to_stride_at, stream);
    if (e != cudaSuccess)
      return e;
  }
  return cudaSuccess;
}

/* The packed bytes of a sub-box (for_each_subbox's arguments). */
inline int64_t subbox_bytes(int64_t run, const int64_t *loops, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    run *= loops[2 * i];
  return run;
}

/* Moves bytes on the device, enqueued on the caller's stream: the mover
 * run_program drives. */
struct DeviceMover {
  const Plan &plan;
  int rank;
  cudaStream_t stream;
  char *err;
  size_t errlen;
  DeviceMover(const Plan &plan, int rank, cudaStream_t stream, char *err,
              size_t errlen)
      : plan(plan), rank(rank), stream(stream), err(err), errlen(errlen) {}
  int check(cudaError_t e, const char *what) {
    return e == cudaSuccess ? RESHARD_OK
                            : cuda_failed(plan, rank, e, what, err, errlen);
  }
  int copy(const int64_t *d, const void *src, void *dst) {
    return check(copy_runs(static_cast<uint8_t *>(dst) + d[1],
                           static_cast<const uint8_t *>(src) + d[0], d[2],
                           d + 4, d[3], 3, 1, 2, stream),
                 "local copy");
  }
  int pack(const int64_t *d, const void *base, int64_t lo, int64_t hi,
           uint8_t *out) {
    cudaError_t e = cudaSuccess;
    for_each_subbox(
        d, lo, hi,
        [&](int64_t off, int64_t run, const int64_t *loops, int64_t n) {
          if (e == cudaSuccess)
            e = copy_runs(out, static_cast<const uint8_t *>(base) + off, run,
                          loops, n, 2, 1, 0, stream);
          out += subbox_bytes(run, loops, n);
        });
    return check(e, "pack");
  }
  int unpack(const int64_t *d, void *base, int64_t lo, int64_t hi,
             const uint8_t *in) {
    cudaError_t e = cudaSuccess;
    for_each_subbox(
        d, lo, hi,
        [&](int64_t off, int64_t run, const int64_t *loops, int64_t n) {
          if (e == cudaSuccess)
            e = copy_runs(static_cast<uint8_t *>(base) + off, in, run, loops, n,
                          2, 0, 1, stream);
          in += subbox_bytes(run, loops, n);
        });
    return check(e, "unpack");
  }
  /* Contiguous bytes: what a transit keeps and forwards. */
  int bytes(const uint8_t *from, uint8_t *to, int64_t n) {
    if (n <= 0)
      return RESHARD_OK;
    return check(cudaMemcpyAsync(to, from, static_cast<size_t>(n),
                                 cudaMemcpyDeviceToDevice, stream),
                 "transit copy");
  }
  /* The fused pack (QuantizeKernels.h): a payload its senders quantize,
   * packed or copied from the caller's full-precision shard with the
   * scales computed before the first step, each box a kernel. */
  template <class Source>
  int copy_quantized(const int64_t *d, const Source &s, void *dst) {
    return quant_boxes(s, d[0], d[1], d[2], d + 4, d[3], 3,
                       static_cast<uint8_t *>(dst), "local copy");
  }
  template <class Source>
  int pack_quantized(const int64_t *d, const Source &s, int64_t lo, int64_t hi,
                     uint8_t *out) {
    int rc = RESHARD_OK;
    for_each_subbox(
        d, lo, hi,
        [&](int64_t off, int64_t run, const int64_t *loops, int64_t n) {
          if (rc == RESHARD_OK)
            rc = quant_boxes(s, off, 0, run, loops, n, 2, out, "pack");
          out += subbox_bytes(run, loops, n);
        });
    return rc;
  }
  /* Loops of `width` 3 (count, source stride, destination stride) or 2
   * (count, source stride; the destination packed): one kernel per box of
   * at most kQuantMaxDims loops, the outer ones iterated here. */
  template <class Source>
  int quant_boxes(const Source &s, int64_t from, int64_t to, int64_t run,
                  const int64_t *loops, int64_t n, int width, uint8_t *out,
                  const char *what) {
#if defined(__CUDACC__)
    QuantLaunch q;
    if (!make_quant_launch(s.kind, s.input, s.ndim, s.shape, s.blocks, s.runs,
                           &q))
      return fail(err, errlen, RESHARD_ERR_ARGS,
                  "%s: rank %d: a quantized shard has more than %d dims or "
                  "%d runs per dim, more than the GPU quantizer takes",
                  plan.name, rank, kQuantMaxDims, kQuantMaxRuns);
    if (n > kQuantMaxDims) {
      int64_t inner = run; /* the packed bytes of one outer iteration */
      for (int64_t i = 1; i < n; ++i)
        inner *= loops[i * width];
      for (int64_t i = 0; i < loops[0]; ++i) {
        int rc = quant_boxes(s, from + i * loops[1],
                             to + i * (width == 3 ? loops[2] : inner), run,
                             loops + width, n - 1, width, out, what);
        if (rc != RESHARD_OK)
          return rc;
      }
      return RESHARD_OK;
    }
    QuantCopyBox b;
    b.from = from;
    b.to = to;
    b.run = run;
    b.n = n;
    int64_t packed = run; /* destination strides when packed */
    for (int64_t l = n - 1; l >= 0; --l) {
      b.loops[3 * l] = loops[l * width];
      b.loops[3 * l + 1] = loops[l * width + 1];
      b.loops[3 * l + 2] = width == 3 ? loops[l * width + 2] : packed;
      packed *= loops[l * width];
    }
    return check(launch_quant_copy(q, b, s.in, s.scales, out, stream), what);
#else
    (void)s, (void)from, (void)to, (void)run, (void)loops, (void)n, (void)width,
        (void)out, (void)what;
    return fail(err, errlen, RESHARD_ERR_ARGS,
                "%s: rank %d: this plan quantizes on the GPU; compile it "
                "with nvcc -x cu",
                plan.name, rank);
#endif
  }
  /* A whole source shard, on the stream (QuantizeKernels.h; a null `out`:
   * the scales only); the generated code of a quantizing plan is compiled
   * by nvcc. */
  int quantize(int kind, int input, const ShardBlocks &sb,
               const int64_t *blocks, const int64_t *runs, const void *in,
               uint8_t *out, void *scales) {
#if defined(__CUDACC__)
    QuantLaunch q;
    if (!make_quant_launch(kind, input, sb.ndim, sb.shape, blocks, runs, &q))
      return fail(err, errlen, RESHARD_ERR_ARGS,
                  "%s: rank %d: a quantized shard has more than %d dims or "
                  "%d runs per dim, more than the GPU quantizer takes",
                  plan.name, rank, kQuantMaxDims, kQuantMaxRuns);
    return check(launch_quantize(q, in, out, scales, stream), "quantize");
#else
    (void)kind, (void)input, (void)sb, (void)blocks, (void)runs, (void)in,
        (void)out, (void)scales;
    return fail(err, errlen, RESHARD_ERR_ARGS,
                "%s: rank %d: this plan quantizes on the GPU; compile it "
                "with nvcc -x cu",
                plan.name, rank);
#endif
  }
};

inline int agree(const Plan &plan, int rank, int status, unsigned flags,
                 int device, ncclComm_t comm, cudaStream_t stream, char *err,
                 size_t errlen) {
  AgreementWords w;
  cudaError_t e = agreement_buffer(device, &w);
  if (e != cudaSuccess)
    return cuda_failed(plan, rank, e, "agreement buffer", err, errlen);
  agreement_words(plan, status, flags, w.host);
  if ((e = cudaMemcpyAsync(w.device, w.host, kAgreementWords * sizeof(*w.host),
                           cudaMemcpyHostToDevice, stream)) != cudaSuccess)
    return cuda_failed(plan, rank, e, "cudaMemcpyAsync", err, errlen);
  ncclResult_t r =
      settle(comm, ncclAllReduce(w.device, w.device, kAgreementWords,
                                 ncclUint64, ncclMax, comm, stream));
  if (r != ncclSuccess)
    return nccl_failed(plan, rank, r, "ncclAllReduce (plan agreement)", err,
                       errlen);
  if ((e = cudaMemcpyAsync(w.host, w.device, kAgreementWords * sizeof(*w.host),
                           cudaMemcpyDeviceToHost, stream)) != cudaSuccess)
    return cuda_failed(plan, rank, e, "plan agreement", err, errlen);
  int waited =
      wait_stream(plan, rank, comm, stream, "the plan agreement", err, errlen);
  if (waited)
    return waited;
  return agreement_verdict(plan, rank, status, flags, w.host, err, errlen);
}

/* `rejected`, when not null, is why the caller refuses its own arguments:
 * the rank joins the agreement only to make every rank fail
 * (<plan>_reject). `flags` (RESHARD_RUN_*) must be the same on every rank. */
inline int run(const Plan &plan, int rank, void *const *src, void *const *dst,
               ncclComm_t comm, cudaStream_t stream, void *workspace,
               size_t workspace_size, char *err, size_t errlen,
               const char *rejected = 0, unsigned flags = 0) {
  if (err && errlen)
    err[0] = '\0';
  int count = 0, me = -1;
  ncclResult_t r;
  if ((r = ncclCommCount(comm, &count)) != ncclSuccess ||
      (r = ncclCommUserRank(comm, &me)) != ncclSuccess)
    return nccl_failed(plan, rank, r, "querying the communicator", err, errlen);
  int device = -1;
  DeviceGuard guard;
  if (cudaError_t de = guard.set(comm, &device))
    return cuda_failed(plan, rank, de, "selecting the communicator's device",
                       err, errlen);
  int status = RESHARD_OK;
  if (int rc =
          check_call(plan, rank, me, count, src, dst, workspace, workspace_size,
                     err, errlen, &status, rejected, flags))
    return rc;
  int rc = agree(plan, me, status, flags, device, comm, stream, err, errlen);
  if (rc)
    return rc;
  const RankProgram *p = program(plan, rank);
  if (!p)
    return RESHARD_OK;
  DeviceMover mover(plan, rank, stream, err, errlen);
  uint8_t *ws = static_cast<uint8_t *>(workspace);
  return run_program(
      plan, *p, src, dst, ws, mover,
      /* The next step's receives are not posted ahead: in one stream a
       * group that waits for a peer's next step would wait for a kernel
       * queued behind itself on that peer (a deadlock). The host enqueues
       * every step without waiting, so each GPU starts a step as soon as
       * it finishes its own previous one. */
      [&](int64_t, const std::vector<Message> &sends,
          const std::vector<Message> &recvs,
          const std::vector<Message> &) -> int {
        ncclResult_t r = ncclGroupStart();
        if (r != ncclSuccess)
          return nccl_failed(plan, rank, r, "ncclGroupStart", err, errlen);
        /* Same order on every rank: peers after this rank first. */
        for (int pass = 0; pass < 2 && r == ncclSuccess; ++pass) {
          for (size_t m = 0; r == ncclSuccess && m < recvs.size(); ++m)
            if ((recvs[m].peer > rank) == (pass == 0))
              r = ncclRecv(ws + recvs[m].staging, recvs[m].bytes, ncclUint8,
                           static_cast<int>(recvs[m].peer), comm, stream);
          for (size_t m = 0; r == ncclSuccess && m < sends.size(); ++m)
            if ((sends[m].peer > rank) == (pass == 0))
              r = ncclSend(ws + sends[m].staging, sends[m].bytes, ncclUint8,
                           static_cast<int>(sends[m].peer), comm, stream);
        }
        ncclResult_t end = ncclGroupEnd();
        /* A nonblocking communicator answers ncclInProgress; the deadline
         * (if any) and asynchronous errors are watched below. */
        if (r != ncclSuccess || (end != ncclSuccess && end != ncclInProgress))
          return nccl_failed(plan, rank, r != ncclSuccess ? r : end,
                             "ncclSend/ncclRecv", err, errlen);
        if (end == ncclInProgress || timeout_seconds() > 0)
          return wait_stream(plan, rank, comm, stream, "a step", err, errlen);
        return RESHARD_OK;
      });
}

} // namespace nccl
} // namespace engine
} // namespace reshard

#endif /* RESHARD_EXECUTIONENGINE_NCCLBACKEND_H */
