//===- RuntimeInterpreter.cpp - Run a reshard_rt plan in one process ------===//
//
// Every rank runs engine::ProgramRunner with the host mover, the code the
// MPI backend runs; messages go from the sender's staging to the
// receiver's, step by step, checked to match in size. The staging of the
// next step's receives, which the MPI backend posts while a step is in
// flight, is overwritten with garbage before and after each step's
// messages move: a layout that let them meet the step's own messages would
// corrupt elements, and the element checks would fail.
//
//===----------------------------------------------------------------------===//
#include "reshard/Reference/RuntimeInterpreter.h"

#include "reshard/Dialect/Runtime/IR/PlanEncoding.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <map>

using namespace mlir;
using namespace reshard;

llvm::Error reshard::executeRuntimePlan(rt::PlanOp plan,
                                        std::vector<ShardBuffers> &src,
                                        std::vector<ShardBuffers> &dst) {
  std::unique_ptr<rt::EncodedPlan> encoded = rt::EncodedPlan::encode(plan);
  if (!encoded)
    return llvm::createStringError("the plan does not encode");
  const engine::Plan &p = encoded->view();
  size_t numTensors = p.num_tensors;
  if (src.size() != numTensors || dst.size() != numTensors)
    return llvm::createStringError(
        "one source and one destination buffer set per tensor is needed");
  engine::HostMover mover;
  struct Rank {
    std::vector<void *> srcPtrs, dstPtrs;
    std::vector<uint8_t> staging;
    std::unique_ptr<engine::ProgramRunner<engine::HostMover>> runner;
  };
  std::vector<Rank> ranks(p.num_programs);
  std::vector<int64_t> bytes(numTensors);
  for (int64_t i = 0; i < p.num_programs; ++i) {
    const engine::RankProgram &prog = p.programs[i];
    Rank &r = ranks[i];
    for (bool isSrc : {true, false}) {
      engine::shard_table(p, prog.rank, isSrc, bytes.data());
      std::vector<ShardBuffers> &side = isSrc ? src : dst;
      std::vector<void *> &ptrs = isSrc ? r.srcPtrs : r.dstPtrs;
      for (size_t t = 0; t < numTensors; ++t) {
        auto it = side[t].find(prog.rank);
        void *ptr = nullptr;
        if (bytes[t] >= 0 && it != side[t].end() &&
            static_cast<int64_t>(it->second.size()) == bytes[t])
          ptr = it->second.data();
        if (bytes[t] > 0 && !ptr)
          return llvm::createStringError(llvm::formatv(
              "rank {0}: the {1} shard of tensor {2} is missing "
              "or is not {3} bytes",
              prog.rank, isSrc ? "source" : "destination", t, bytes[t]));
        ptrs.push_back(ptr);
      }
    }
    r.staging.assign(prog.workspace, 0);
    r.runner = std::make_unique<engine::ProgramRunner<engine::HostMover>>(
        p, prog, r.srcPtrs.data(), r.dstPtrs.data(), r.staging.data(), mover);
    r.runner->quantize();
    r.runner->copies();
  }
  auto scribbleAhead = [&] {
    for (Rank &r : ranks)
      for (const engine::Message &m : r.runner->ahead)
        std::memset(r.staging.data() + m.staging, 0xA5, m.bytes);
  };
  for (int64_t step = 0; step < p.max_steps; ++step) {
    for (Rank &r : ranks)
      r.runner->pack(step);
    scribbleAhead();
    // Each receive takes its peer's send to this rank in this step.
    for (int64_t i = 0; i < p.num_programs; ++i) {
      int64_t me = p.programs[i].rank;
      for (const engine::Message &m : ranks[i].runner->recvs) {
        const engine::Message *sent = nullptr;
        int32_t peer = m.peer < p.num_ranks ? p.program_of_rank[m.peer] : -1;
        if (peer >= 0)
          for (const engine::Message &s : ranks[peer].runner->sends)
            if (s.peer == me)
              sent = &s;
        if (!sent || sent->bytes != m.bytes)
          return llvm::createStringError(llvm::formatv(
              "step {0}: rank {1} expects {2} bytes from rank {3}, which "
              "sends {4}",
              step, me, m.bytes, m.peer, sent ? sent->bytes : 0));
        std::memcpy(ranks[i].staging.data() + m.staging,
                    ranks[peer].staging.data() + sent->staging, m.bytes);
      }
    }
    scribbleAhead();
    for (Rank &r : ranks)
      r.runner->unpack(step);
  }
  for (Rank &r : ranks)
    r.runner->quantize_received();
  return llvm::Error::success();
}
