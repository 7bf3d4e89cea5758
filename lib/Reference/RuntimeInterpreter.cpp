//===- RuntimeInterpreter.cpp - Run a reshard_rt plan in one process ------===//
//
// Every rank runs engine::ProgramRunner with the host mover, the code the
// MPI backend runs; messages go from the sender's staging to the
// receiver's, step by step, checked to match in size. The staging of the
// next step's receives, which the MPI backend posts while a step is in
// flight, is overwritten with garbage before and after each step's
// messages move: a layout that let them meet the step's own messages would
// corrupt elements, and the element checks would fail. With a MessageCut,
// messages move as the MPI backend's parts, each checked against its
// peer's in number and size, and local copies run as the MPI backend runs
// them, inside the first exchange.
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
                                        std::vector<ShardBuffers> &dst,
                                        MessageCut cut) {
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
    if (cut.directMin > 0) {
      r.runner->cut_into_parts(cut.directMin, cut.maxPart);
      r.runner->overlap_copies();
    }
    r.runner->quantize();
    if (!r.runner->copies_overlap())
      r.runner->copies();
  }
  // What the MPI backend posts ahead lands while a step runs: its staging,
  // or with parts, where each part goes (a destination tensor, in place).
  auto scribbleAhead = [&] {
    for (Rank &r : ranks) {
      if (cut.directMin > 0) {
        for (const std::vector<engine::Part> &parts : r.runner->aheadParts)
          for (const engine::Part &part : parts)
            std::memset(part.at, 0xA5, part.bytes);
        continue;
      }
      for (const engine::Message &m : r.runner->ahead)
        std::memset(r.staging.data() + m.staging, 0xA5, m.bytes);
    }
  };
  // The receives posted ahead must be the ones the step then waits for.
  std::vector<std::vector<std::vector<engine::Part>>> postedAhead(ranks.size());
  auto samePosted = [](const std::vector<std::vector<engine::Part>> &a,
                       const std::vector<std::vector<engine::Part>> &b) {
    if (a.size() != b.size())
      return false;
    for (size_t m = 0; m < a.size(); ++m) {
      if (a[m].size() != b[m].size())
        return false;
      for (size_t k = 0; k < a[m].size(); ++k)
        if (a[m][k].at != b[m][k].at || a[m][k].bytes != b[m][k].bytes)
          return false;
    }
    return true;
  };
  for (int64_t step = 0; step < p.max_steps; ++step) {
    for (size_t i = 0; i < ranks.size(); ++i) {
      engine::ProgramRunner<engine::HostMover> &r = *ranks[i].runner;
      r.pack(step);
      if (cut.directMin > 0 && !postedAhead[i].empty() &&
          !samePosted(postedAhead[i], r.recvParts))
        return llvm::createStringError(llvm::formatv(
            "step {0}: rank {1} receives other parts than it posted ahead",
            step, p.programs[i].rank));
      if (cut.directMin > 0)
        postedAhead[i] = r.aheadParts;
    }
    scribbleAhead();
    // Each receive takes its peer's send to this rank in this step.
    for (int64_t i = 0; i < p.num_programs; ++i) {
      int64_t me = p.programs[i].rank;
      const engine::ProgramRunner<engine::HostMover> &to = *ranks[i].runner;
      for (size_t m = 0; m < to.recvs.size(); ++m) {
        const engine::Message &msg = to.recvs[m];
        int64_t sent = -1;
        int32_t peer =
            msg.peer < p.num_ranks ? p.program_of_rank[msg.peer] : -1;
        const engine::ProgramRunner<engine::HostMover> *from =
            peer >= 0 ? ranks[peer].runner.get() : nullptr;
        for (size_t k = 0; from && k < from->sends.size(); ++k)
          if (from->sends[k].peer == me)
            sent = k;
        if (sent < 0 || from->sends[sent].bytes != msg.bytes)
          return llvm::createStringError(llvm::formatv(
              "step {0}: rank {1} expects {2} bytes from rank {3}, which "
              "sends {4}",
              step, me, msg.bytes, msg.peer,
              sent < 0 ? 0 : from->sends[sent].bytes));
        if (cut.directMin <= 0) {
          std::memcpy(ranks[i].staging.data() + msg.staging,
                      ranks[peer].staging.data() + from->sends[sent].staging,
                      msg.bytes);
          continue;
        }
        const std::vector<engine::Part> &in = to.recvParts[m];
        const std::vector<engine::Part> &out = from->sendParts[sent];
        for (size_t k = 0; k < in.size() || k < out.size(); ++k) {
          if (k >= in.size() || k >= out.size() || in[k].bytes != out[k].bytes)
            return llvm::createStringError(llvm::formatv(
                "step {0}: rank {1}'s part {2} from rank {3} is {4} bytes, "
                "rank {3} sends {5}",
                step, me, k, msg.peer, k < in.size() ? in[k].bytes : 0,
                k < out.size() ? out[k].bytes : 0));
          std::memcpy(in[k].at, out[k].at, in[k].bytes);
        }
      }
    }
    scribbleAhead();
    // As the MPI backend: a rank's local copies run once its first step
    // with messages has them in flight, after every send of the step read
    // its bytes here (so a send that needed a copy's bytes fails).
    for (Rank &r : ranks)
      if (!r.runner->sends.empty() || !r.runner->recvs.empty())
        r.runner->copies();
    for (Rank &r : ranks)
      r.runner->unpack(step);
  }
  for (Rank &r : ranks) // ranks without messages
    r.runner->copies();
  for (Rank &r : ranks)
    r.runner->quantize_received();
  return llvm::Error::success();
}
