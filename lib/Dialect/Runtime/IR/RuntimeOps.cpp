//===- RuntimeOps.cpp - reshard_rt ops and the plan verifier --------------===//
//
// The plan verifier checks what the generated code relies on: descriptors
// inside the shards, staging inside the workspace, every send matched by a
// receive of the same size in the same step, and no byte written twice in a
// step.
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"
#include "reshard/ExecutionEngine/Engine.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <climits>
#include <map>

using namespace mlir;
using namespace reshard::rt;

#define GET_OP_CLASSES
#include "reshard/Dialect/Runtime/IR/RuntimeOps.cpp.inc"

size_t reshard::rt::boxDescriptorLength(ArrayRef<int64_t> d) {
  if (d.size() < 5 || d[4] < 0 || d[4] > 64)
    return 0;
  size_t len = 5 + 2 * d[4];
  return len <= d.size() ? len : 0;
}

size_t reshard::rt::copyDescriptorLength(ArrayRef<int64_t> d) {
  if (d.size() < 5 || d[4] < 0 || d[4] > 64)
    return 0;
  size_t len = 5 + 3 * d[4];
  return len <= d.size() ? len : 0;
}

namespace {

/// Most contiguous runs the overlap check lists for a whole plan.
constexpr int64_t kMaxVerifiedRuns = int64_t(1) << 26;

/// A half-open byte range written in one tensor buffer.
struct Run {
  int64_t begin, end;
};

/// Checks one strided box against its buffer's size; appends its runs.
/// `strides` holds n (count, stride) pairs, `strideStep` apart.
LogicalResult checkBox(Operation *op, const char *what, int64_t offset,
                       int64_t run, llvm::ArrayRef<int64_t> loops,
                       unsigned loopWidth, unsigned strideIndex,
                       int64_t bufferBytes, int64_t &bytes,
                       std::vector<Run> *runs, int64_t &runsLeft) {
  if (offset < 0 || run <= 0)
    return op->emitOpError()
           << what << " has offset " << offset << " and run " << run
           << "; both must be positive (offset may be 0)";
  // The last byte reached (extent) and the runs (count), without overflow.
  std::optional<int64_t> extent = llvm::checkedAdd(offset, run), count = 1;
  if (!extent)
    return op->emitOpError() << what << " overflows 64 bits";
  for (size_t i = 0; i < loops.size(); i += loopWidth) {
    int64_t c = loops[i], stride = loops[i + strideIndex];
    if (c <= 0 || stride < 0)
      return op->emitOpError() << what << " has a loop of count " << c
                               << " and stride " << stride;
    std::optional<int64_t> span = llvm::checkedMul(c - 1, stride);
    if (!span || !(extent = llvm::checkedAdd(*extent, *span)) ||
        !(count = llvm::checkedMul(*count, c)))
      return op->emitOpError() << what << " overflows 64 bits";
  }
  if (bufferBytes < 0)
    return op->emitOpError() << what
                             << " is in a shard the rank does not "
                                "have (not in that side's mesh)";
  if (*extent > bufferBytes)
    return op->emitOpError() << what << " reaches byte " << *extent
                             << " of a buffer of " << bufferBytes << " bytes";
  std::optional<int64_t> boxBytes = llvm::checkedMul(*count, run);
  std::optional<int64_t> total =
      boxBytes ? llvm::checkedAdd(bytes, *boxBytes) : std::nullopt;
  if (!total)
    return op->emitOpError() << what << " overflows 64 bits";
  bytes = *total;
  // The overlap check lists runs one by one; bound that work per plan.
  if (runs && (runsLeft -= *count) < 0)
    return op->emitOpError()
           << "brings the plan's writes to more than " << kMaxVerifiedRuns
           << " contiguous runs; the verifier cannot check "
              "that many for overlaps";
  if (!runs)
    return success();
  // Enumerate the runs (odometer over the loops) for the overlap check.
  size_t n = loops.size() / loopWidth;
  llvm::SmallVector<int64_t> idx(n, 0);
  while (true) {
    int64_t at = offset;
    for (size_t k = 0; k < n; ++k)
      at += idx[k] * loops[k * loopWidth + strideIndex];
    runs->push_back({at, at + run});
    int k = static_cast<int>(n) - 1;
    for (; k >= 0; --k) {
      if (++idx[k] < loops[k * loopWidth])
        break;
      idx[k] = 0;
    }
    if (k < 0)
      break;
  }
  return success();
}

/// Fails if two runs of one buffer overlap.
/// Sorts runs by start. They arrive as a few ascending sequences (one per
/// descriptor, in row-major order), so merging those sequences pairwise costs
/// O(n log k); std::sort on such interleavings degrades to its heapsort
/// fallback and dominated whole-model verification.
void sortRuns(std::vector<Run> &runs) {
  auto before = [](const Run &a, const Run &b) { return a.begin < b.begin; };
  std::vector<size_t> bounds{0};
  for (size_t i = 1; i < runs.size(); ++i)
    if (before(runs[i], runs[i - 1]))
      bounds.push_back(i);
  bounds.push_back(runs.size());
  while (bounds.size() > 2) {
    std::vector<size_t> merged{0};
    size_t j = 0;
    for (; j + 2 < bounds.size(); j += 2) {
      std::inplace_merge(runs.begin() + bounds[j], runs.begin() + bounds[j + 1],
                         runs.begin() + bounds[j + 2], before);
      merged.push_back(bounds[j + 2]);
    }
    if (j + 1 < bounds.size()) // an odd sequence out, merged next round
      merged.push_back(bounds[j + 1]);
    bounds.swap(merged);
  }
}

LogicalResult checkDisjoint(Operation *op, std::vector<Run> &runs,
                            const Twine &what) {
  sortRuns(runs);
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i].begin < runs[i - 1].end)
      return op->emitOpError()
             << what << " writes bytes [" << runs[i].begin << ", "
             << std::min(runs[i].end, runs[i - 1].end) << ") twice";
  return success();
}

/// The length of the descriptor that starts `rest` (`length` is
/// boxDescriptorLength or copyDescriptorLength), or failure after saying
/// why it is malformed.
FailureOr<size_t> descriptorAt(Operation *op, ArrayRef<int64_t> rest,
                               size_t (*length)(ArrayRef<int64_t>),
                               StringRef kind) {
  if (size_t len = length(rest))
    return len;
  if (rest.size() >= 5 && (rest[4] < 0 || rest[4] > 64))
    return op->emitOpError() << "has a " << kind << " descriptor with "
                             << rest[4] << " loops; 0 to 64 are allowed";
  return op->emitOpError() << "has a truncated " << kind << " descriptor";
}

struct Message {
  Operation *op;
  int64_t bytes;
};

} // namespace

int64_t RankOp::getShardBytes(int64_t tensor, bool src) {
  ArrayRef<int64_t> shards = getShards();
  return reshard::engine::find_shard_bytes(
      shards.data(), static_cast<int64_t>(shards.size() / 3), tensor, src);
}

void RankOp::encode(SmallVectorImpl<int64_t> &shards,
                    SmallVectorImpl<int64_t> &copies,
                    SmallVectorImpl<int64_t> &steps) {
  shards.append(getShards().begin(), getShards().end());
  for (Operation &op : getBody().front()) {
    if (auto copy = dyn_cast<CopyOp>(op)) {
      copies.append(copy.getCopies().begin(), copy.getCopies().end());
      continue;
    }
    auto step = cast<StepOp>(op);
    SmallVector<SendOp> sends(step.getBody().front().getOps<SendOp>());
    SmallVector<RecvOp> recvs(step.getBody().front().getOps<RecvOp>());
    steps.append({static_cast<int64_t>(step.getIndex()),
                  static_cast<int64_t>(sends.size()),
                  static_cast<int64_t>(recvs.size())});
    for (SendOp s : sends) {
      steps.append({static_cast<int64_t>(s.getPeer()),
                    static_cast<int64_t>(s.getBytes()),
                    static_cast<int64_t>(s.getStaging()),
                    static_cast<int64_t>(s.getPack().size())});
      steps.append(s.getPack().begin(), s.getPack().end());
    }
    for (RecvOp v : recvs) {
      steps.append({static_cast<int64_t>(v.getPeer()),
                    static_cast<int64_t>(v.getBytes()),
                    static_cast<int64_t>(v.getStaging()),
                    static_cast<int64_t>(v.getUnpack().size())});
      steps.append(v.getUnpack().begin(), v.getUnpack().end());
    }
  }
}

LogicalResult PlanOp::verifyRegions() {
  int64_t numRanks = getNumRanks();
  size_t numTensors = getTensors().size();
  if (numRanks <= 0 || numRanks > INT32_MAX)
    return emitOpError() << "num_ranks must be in [1, 2^31 - 1], got "
                         << numRanks;
  // Names become shard file names and the C ABI's answers: one each.
  llvm::StringMap<size_t> tensorAt;
  for (auto [i, name] : llvm::enumerate(getTensors())) {
    auto [it, inserted] =
        tensorAt.try_emplace(cast<StringAttr>(name).getValue(), i);
    if (!inserted)
      return emitOpError() << "names tensor " << name << " twice (tensors["
                           << it->second << "] and tensors[" << i << "])";
  }
  // (step, from, to) -> message, for sends and receives.
  std::map<std::tuple<int64_t, int64_t, int64_t>, Message> sends, recvs;
  llvm::DenseMap<int64_t, RankOp> seen;
  int64_t runsLeft = kMaxVerifiedRuns;
  for (Operation &child : getBody().front()) {
    auto rank = dyn_cast<RankOp>(child);
    if (!rank)
      return child.emitOpError("is not allowed in a reshard_rt.plan");
    int64_t r = rank.getRank();
    if (r < 0 || r >= numRanks)
      return rank.emitOpError()
             << "rank " << r << " is outside the communicator of " << numRanks
             << " ranks";
    if (!seen.try_emplace(r, rank).second)
      return rank.emitOpError() << "rank " << r << " has two programs";
    ArrayRef<int64_t> shards = rank.getShards();
    if (shards.size() % 3)
      return rank.emitOpError() << "shards are (tensor, source bytes, "
                                   "destination bytes) triples; got "
                                << shards.size() << " numbers";
    for (size_t i = 0; i < shards.size(); i += 3) {
      int64_t t = shards[i], srcBytes = shards[i + 1], dstBytes = shards[i + 2];
      if (t < 0 || t >= static_cast<int64_t>(numTensors))
        return rank.emitOpError() << "shards[" << i / 3 << "] names tensor "
                                  << t << " of " << numTensors;
      if (i && t <= shards[i - 3])
        return rank.emitOpError() << "shards[" << i / 3 << "] names tensor "
                                  << t << " after tensor " << shards[i - 3]
                                  << "; tensors must ascend, once each";
      for (int64_t b : {srcBytes, dstBytes})
        if (b < -1)
          return rank.emitOpError()
                 << "shard sizes are bytes, or -1 for a rank outside the "
                    "mesh; got "
                 << b << " for tensor " << t;
      if (srcBytes < 0 && dstBytes < 0)
        return rank.emitOpError() << "shards[" << i / 3 << "] lists tensor "
                                  << t << " with neither shard; leave it out";
    }
    if (static_cast<int64_t>(rank.getWorkspace()) < 0)
      return rank.emitOpError() << "workspace must not be negative";
    auto bufferBytes = [&](int64_t tensor, int64_t buffer) -> int64_t {
      return rank.getShardBytes(tensor, buffer == 0);
    };
    int64_t lastStep = -1;
    bool seenStep = false;
    CopyOp lastCopy;
    std::map<int64_t, std::vector<Run>> copied; // all copies of the rank
    for (Operation &op : rank.getBody().front()) {
      if (auto copy = dyn_cast<CopyOp>(op)) {
        if (seenStep)
          return copy.emitOpError("must come before the rank's first step "
                                  "(copies run first)");
        std::map<int64_t, std::vector<Run>> &written = copied;
        ArrayRef<int64_t> table = copy.getCopies();
        for (size_t i = 0; i < table.size();) {
          FailureOr<size_t> len = descriptorAt(copy, table.drop_front(i),
                                               copyDescriptorLength, "copy");
          if (failed(len))
            return failure();
          ArrayRef<int64_t> d = table.slice(i, *len);
          if (d[0] < 0 || d[0] >= static_cast<int64_t>(numTensors))
            return copy.emitOpError() << "names tensor " << d[0];
          int64_t bytesSrc = 0, bytesDst = 0;
          if (failed(checkBox(copy, "a copy source", d[1], d[3],
                              d.drop_front(5), 3, 1, bufferBytes(d[0], 0),
                              bytesSrc, nullptr, runsLeft)) ||
              failed(checkBox(copy, "a copy destination", d[2], d[3],
                              d.drop_front(5), 3, 2, bufferBytes(d[0], 1),
                              bytesDst, &written[d[0]], runsLeft)))
            return failure();
          i += *len;
        }
        lastCopy = copy;
        continue;
      }
      if (!seenStep && lastCopy)
        for (auto &[tensor, runs] : copied)
          if (failed(
                  checkDisjoint(lastCopy, runs,
                                "the local copies of tensor " + Twine(tensor))))
            return failure();
      seenStep = true;
      auto step = dyn_cast<StepOp>(op);
      if (!step)
        return op.emitOpError("is not allowed in a reshard_rt.rank");
      int64_t index = static_cast<int64_t>(step.getIndex());
      if (index < 0)
        return step.emitOpError()
               << "step index " << index << " must not be negative";
      if (index <= lastStep)
        return step.emitOpError()
               << "step " << index << " does not follow step " << lastStep;
      lastStep = index;
      std::vector<Run> staging;
      std::map<int64_t, std::vector<Run>> written;
      for (Operation &m : step.getBody().front()) {
        bool isSend = isa<SendOp>(m);
        if (!isSend && !isa<RecvOp>(m))
          return m.emitOpError("is not allowed in a reshard_rt.step");
        int64_t peer, bytes, at;
        ArrayRef<int64_t> table;
        if (auto s = dyn_cast<SendOp>(m)) {
          peer = s.getPeer(), bytes = s.getBytes(), at = s.getStaging();
          table = s.getPack();
        } else {
          auto rv = cast<RecvOp>(m);
          peer = rv.getPeer(), bytes = rv.getBytes(), at = rv.getStaging();
          table = rv.getUnpack();
        }
        if (peer < 0 || peer >= numRanks || peer == r)
          return m.emitOpError() << "peer " << peer
                                 << " must be another rank of the "
                                    "communicator of "
                                 << numRanks;
        int64_t workspace = static_cast<int64_t>(rank.getWorkspace());
        std::optional<int64_t> end = llvm::checkedAdd(at, bytes);
        if (bytes <= 0 || at < 0 || !end || *end > workspace)
          return m.emitOpError()
                 << "staging of " << bytes << " bytes at offset " << at
                 << " must be non-empty and inside the workspace of "
                 << workspace << " bytes";
        staging.push_back({at, at + bytes});
        int64_t described = 0;
        for (size_t i = 0; i < table.size();) {
          FailureOr<size_t> len =
              descriptorAt(&m, table.drop_front(i), boxDescriptorLength, "box");
          if (failed(len))
            return failure();
          ArrayRef<int64_t> d = table.slice(i, *len);
          if (d[0] < 0 || d[0] >= static_cast<int64_t>(numTensors) ||
              (d[1] != 0 && d[1] != 1) || (!isSend && d[1] != 1))
            return m.emitOpError() << "box descriptor names tensor " << d[0]
                                   << " buffer " << d[1]
                                   << "; receives unpack into destination "
                                      "shards (buffer 1)";
          if (failed(checkBox(&m, isSend ? "a packed box" : "an unpacked box",
                              d[2], d[3], d.drop_front(5), 2, 1,
                              bufferBytes(d[0], d[1]), described,
                              isSend ? nullptr : &written[d[0]], runsLeft)))
            return failure();
          i += *len;
        }
        if (described != bytes)
          return m.emitOpError() << "describes " << described
                                 << " bytes but the message has " << bytes;
        auto key = isSend ? std::make_tuple(index, r, peer)
                          : std::make_tuple(index, peer, r);
        auto &map = isSend ? sends : recvs;
        if (!map.try_emplace(key, Message{&m, bytes}).second)
          return m.emitOpError()
                 << "is a second message between ranks " << std::get<1>(key)
                 << " and " << std::get<2>(key) << " in step " << index;
      }
      if (failed(checkDisjoint(step, staging, "the staging of this step")))
        return failure();
      if (std::optional<uint64_t> budget = getStagingBudget()) {
        int64_t used = 0;
        for (const Run &r : staging)
          used += r.end - r.begin;
        if (used > static_cast<int64_t>(*budget))
          return step.emitOpError()
                 << "stages " << used << " bytes on rank " << r
                 << ", more than the staging budget of " << *budget;
      }
      for (auto &[tensor, runs] : written)
        if (failed(checkDisjoint(step, runs,
                                 "the receives of tensor " + Twine(tensor))))
          return failure();
    }
    if (!seenStep && lastCopy) // a rank with copies only
      for (auto &[tensor, runs] : copied)
        if (failed(checkDisjoint(
                lastCopy, runs, "the local copies of tensor " + Twine(tensor))))
          return failure();
  }
  for (auto &[key, send] : sends) {
    auto it = recvs.find(key);
    if (it == recvs.end())
      return send.op->emitOpError()
             << "has no matching reshard_rt.recv on rank " << std::get<2>(key)
             << " in step " << std::get<0>(key);
    if (it->second.bytes != send.bytes)
      return send.op->emitOpError()
             << "sends " << send.bytes << " bytes but rank " << std::get<2>(key)
             << " receives " << it->second.bytes;
  }
  for (auto &[key, recv] : recvs)
    if (!sends.count(key))
      return recv.op->emitOpError()
             << "has no matching reshard_rt.send on rank " << std::get<1>(key)
             << " in step " << std::get<0>(key);
  return success();
}
