//===- RuntimeInterpreter.cpp - Run a reshard_rt plan in one process ------===//
#include "reshard/Reference/RuntimeInterpreter.h"

#include "reshard/ExecutionEngine/Engine.h"

#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace mlir;
using namespace reshard;

llvm::Error reshard::executeRuntimePlan(rt::PlanOp plan,
                                        std::vector<ShardBuffers> &src,
                                        std::vector<ShardBuffers> &dst) {
  size_t numTensors = plan.getTensors().size();
  if (src.size() != numTensors || dst.size() != numTensors)
    return llvm::createStringError(
        "one source and one destination buffer set per tensor is needed");
  struct Program {
    int64_t rank;
    SmallVector<int64_t> shards, copies, steps;
    std::vector<void *> srcPtrs, dstPtrs;
    engine::RankProgram program;
  };
  std::vector<Program> programs;
  for (rt::RankOp rank : plan.getBody().front().getOps<rt::RankOp>()) {
    Program p;
    p.rank = rank.getRank();
    rank.encode(p.shards, p.copies, p.steps);
    for (size_t t = 0; t < numTensors; ++t) {
      auto bufferOf = [&](ShardBuffers &side, int64_t bytes) -> void * {
        if (bytes < 0)
          return nullptr;
        auto it = side.find(p.rank);
        if (it == side.end() ||
            static_cast<int64_t>(it->second.size()) != bytes)
          return nullptr;
        return it->second.data();
      };
      int64_t srcBytes = rank.getShardBytes(t, true),
              dstBytes = rank.getShardBytes(t, false);
      p.srcPtrs.push_back(bufferOf(src[t], srcBytes));
      p.dstPtrs.push_back(bufferOf(dst[t], dstBytes));
      if ((srcBytes > 0 && !p.srcPtrs.back()) ||
          (dstBytes > 0 && !p.dstPtrs.back()))
        return llvm::createStringError(
            llvm::formatv("rank {0}: a shard of tensor {1} is missing or "
                          "has the wrong size",
                          p.rank, t));
    }
    programs.push_back(std::move(p));
  }
  // Decode every rank's steps, then run them step by step: all sends of a
  // step are packed before any receive of it is unpacked, as on real ranks.
  struct Decoded {
    std::vector<engine::Message> sends, recvs;
  };
  std::map<int64_t, std::map<int64_t, Decoded>> byStep; // step, rank
  for (Program &p : programs) {
    p.program = {p.rank,          0,
                 p.shards.data(), static_cast<int64_t>(p.shards.size() / 3),
                 p.copies.data(), static_cast<int64_t>(p.copies.size()),
                 p.steps.data(),  static_cast<int64_t>(p.steps.size())};
    engine::copy_boxes(p.program, p.srcPtrs.data(), p.dstPtrs.data());
    std::vector<engine::Message> scratch(engine::max_messages(p.program) + 1);
    engine::for_each_step(p.program, scratch.data(),
                          [&](int64_t index, engine::Message *sends,
                              int64_t nsend, engine::Message *recvs,
                              int64_t nrecv) {
                            Decoded &d = byStep[index][p.rank];
                            d.sends.assign(sends, sends + nsend);
                            d.recvs.assign(recvs, recvs + nrecv);
                            return 0;
                          });
  }
  std::map<int64_t, Program *> byRank;
  for (Program &p : programs)
    byRank[p.rank] = &p;
  for (auto &[step, ranks] : byStep) {
    std::map<std::pair<int64_t, int64_t>, std::vector<uint8_t>> messages;
    for (auto &[rank, d] : ranks) {
      Program &p = *byRank[rank];
      for (const engine::Message &m : d.sends) {
        std::vector<uint8_t> &bytes = messages[{rank, m.peer}];
        bytes.resize(m.bytes);
        int64_t at = 0;
        for (int64_t i = 0; i < m.desc_len; i += engine::box_length(m.desc + i))
          at += engine::pack_box(m.desc + i, p.srcPtrs.data(), p.dstPtrs.data(),
                                 bytes.data() + at);
        if (at != m.bytes)
          return llvm::createStringError(
              llvm::formatv("step {0}: rank {1} packs {2} bytes for rank "
                            "{3}, its message has {4}",
                            step, rank, at, m.peer, m.bytes));
      }
    }
    for (auto &[rank, d] : ranks) {
      Program &p = *byRank[rank];
      for (const engine::Message &m : d.recvs) {
        auto it = messages.find({m.peer, rank});
        if (it == messages.end() ||
            static_cast<int64_t>(it->second.size()) != m.bytes)
          return llvm::createStringError(llvm::formatv(
              "step {0}: rank {1} expects {2} bytes from "
              "rank {3}, which sends {4}",
              step, rank, m.bytes, m.peer,
              it == messages.end() ? int64_t(0)
                                   : static_cast<int64_t>(it->second.size())));
        int64_t at = 0;
        for (int64_t i = 0; i < m.desc_len; i += engine::box_length(m.desc + i))
          at += engine::unpack_box(m.desc + i, p.dstPtrs.data(),
                                   it->second.data() + at);
      }
    }
  }
  return llvm::Error::success();
}
