//===- ReshardToRuntime.cpp - Planned pieces to per-rank programs ---------===//
//
// Each piece becomes a box descriptor on each side (or a copy descriptor for
// a local copy); pieces of one (step, sender, receiver) become one message,
// in canonical order (tensor, then piece), so sender and receiver agree on
// the message layout without talking.
//
//===----------------------------------------------------------------------===//
#include "reshard/Conversion/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <cctype>
#include <map>
#include <set>

namespace reshard {
#define GEN_PASS_DEF_CONVERTRESHARDTORUNTIME
#include "reshard/Conversion/Passes.h.inc"
} // namespace reshard

using namespace mlir;
using namespace reshard;

namespace {

/// Row-major byte strides of a dense buffer of `shape`.
SmallVector<int64_t> byteStrides(ArrayRef<int64_t> shape, int64_t eb) {
  SmallVector<int64_t> strides(shape.size());
  int64_t s = eb;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

/// Appends the strided form of box `sizes` at `offsets` in one or more
/// buffers (one shape per buffer, iterated together): the first integer of
/// each buffer's offset, the shared run, and the loops with one stride per
/// buffer. Dims whose box is full in every buffer merge into the run.
void describeBox(ArrayRef<int64_t> sizes, ArrayRef<ArrayRef<int64_t>> shapes,
                 ArrayRef<ArrayRef<int64_t>> offsets, int64_t eb,
                 SmallVectorImpl<int64_t> &byteOffsets, int64_t &run,
                 SmallVectorImpl<int64_t> &loops) {
  unsigned rank = sizes.size(), n = shapes.size();
  SmallVector<SmallVector<int64_t>> strides;
  for (ArrayRef<int64_t> shape : shapes)
    strides.push_back(byteStrides(shape, eb));
  for (unsigned b = 0; b < n; ++b) {
    int64_t off = 0;
    for (unsigned d = 0; d < rank; ++d)
      off += offsets[b][d] * strides[b][d];
    byteOffsets.push_back(off);
  }
  run = eb;
  int k = static_cast<int>(rank) - 1;
  // Merge inner dims while the box spans them fully in every buffer.
  while (k >= 0) {
    run *= sizes[k];
    bool full = llvm::all_of(
        shapes, [&](ArrayRef<int64_t> s) { return s[k] == sizes[k]; });
    --k;
    if (!full)
      break;
  }
  // Outer loops, outermost first; count-1 loops are dropped and a loop
  // whose stride equals the next loop's span merges into it.
  struct Loop {
    int64_t count;
    SmallVector<int64_t> strides;
  };
  SmallVector<Loop> out;
  for (int d = 0; d <= k; ++d) {
    if (sizes[d] == 1)
      continue;
    Loop l{sizes[d], {}};
    for (unsigned b = 0; b < n; ++b)
      l.strides.push_back(strides[b][d]);
    out.push_back(std::move(l));
  }
  for (int i = static_cast<int>(out.size()) - 2; i >= 0; --i) {
    Loop &outer = out[i], &inner = out[i + 1];
    bool merge = true;
    for (unsigned b = 0; b < n; ++b)
      merge &= outer.strides[b] == inner.count * inner.strides[b];
    if (!merge)
      continue;
    inner.count *= outer.count;
    out.erase(out.begin() + i);
  }
  for (const Loop &l : out) {
    loops.push_back(l.count);
    loops.append(l.strides.begin(), l.strides.end());
  }
}

/// [tensor, buffer, offset, run, n, (count, stride) x n]
void appendBoxDescriptor(SmallVectorImpl<int64_t> &table, int64_t tensor,
                         int64_t buffer, ArrayRef<int64_t> shape,
                         ArrayRef<int64_t> offset, ArrayRef<int64_t> sizes,
                         int64_t eb) {
  SmallVector<int64_t> byteOffsets, loops;
  int64_t run;
  describeBox(sizes, {shape}, {offset}, eb, byteOffsets, run, loops);
  table.append({tensor, buffer, byteOffsets[0], run,
                static_cast<int64_t>(loops.size() / 2)});
  table.append(loops);
}

/// [tensor, src_offset, dst_offset, run, n, (count, s, d) x n]
void appendCopyDescriptor(SmallVectorImpl<int64_t> &table, int64_t tensor,
                          ArrayRef<int64_t> srcShape, ArrayRef<int64_t> srcOff,
                          ArrayRef<int64_t> dstShape, ArrayRef<int64_t> dstOff,
                          ArrayRef<int64_t> sizes, int64_t eb) {
  SmallVector<int64_t> byteOffsets, loops;
  int64_t run;
  describeBox(sizes, {srcShape, dstShape}, {srcOff, dstOff}, eb, byteOffsets,
              run, loops);
  table.append({tensor, byteOffsets[0], byteOffsets[1], run,
                static_cast<int64_t>(loops.size() / 3)});
  table.append(loops);
}

/// One message under construction.
struct Message {
  SmallVector<int64_t> pack, unpack;
  int64_t bytes = 0;
};

/// FNV-1a over 64-bit words and strings: the plan's fingerprint.
struct Fingerprint {
  uint64_t h = 1469598103934665603ull;
  void add(uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xFF;
      h *= 1099511628211ull;
    }
  }
  void add(StringRef s) {
    add(s.size());
    for (char c : s) {
      h ^= static_cast<uint8_t>(c);
      h *= 1099511628211ull;
    }
  }
  void add(ArrayRef<int64_t> v) {
    add(v.size());
    for (int64_t x : v)
      add(static_cast<uint64_t>(x));
  }
};

struct ConvertReshardToRuntimePass
    : public reshard::impl::ConvertReshardToRuntimeBase<
          ConvertReshardToRuntimePass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

static bool isCIdentifier(StringRef s) {
  if (s.empty() ||
      !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

void ConvertReshardToRuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  std::string name = planName;
  if (name.empty())
    name = module.getSymName() ? module.getSymName()->str() : "reshard_plan";
  if (!isCIdentifier(name)) {
    emitError(module.getLoc())
        << "plan name '" << name
        << "' is not a C identifier; give the module a name "
           "that is, or set convert-reshard-to-runtime{"
           "plan-name=...} (reshard-opt)";
    return signalPassFailure();
  }
  FailureOr<PlanModule> plan = PlanModule::load(module, getArgument());
  if (failed(plan))
    return signalPassFailure();
  std::vector<PlannedTensor> &tensors = plan->tensors;

  int64_t numRanks = 1; // an empty plan still needs a communicator
  for (const PlannedTensor &pt : tensors)
    for (const MeshSpec *m : {&pt.layout.src.mesh, &pt.layout.dst.mesh})
      for (int64_t r : m->ranks)
        numRanks = std::max(numRanks, r + 1);

  // Per rank: (tensor, src bytes, dst bytes) of the tensors whose meshes
  // hold it, copies, and messages per step.
  struct RankData {
    SmallVector<int64_t> shards, copies;
    std::map<int64_t, std::map<int64_t, Message>> sends, recvs; // step, peer
  };
  std::map<int64_t, RankData> ranks;
  auto rankData = [&](int64_t r) -> RankData & { return ranks[r]; };
  // Tensors come in ascending order, so a rank's entry for tensor t, if
  // any, is its last one. -1: the rank is not in that side's mesh.
  auto shardEntry = [&](int64_t r, int64_t t) -> int64_t * {
    SmallVector<int64_t> &shards = rankData(r).shards;
    if (shards.empty() || shards[shards.size() - 3] != t)
      shards.append({t, -1, -1});
    return &shards[shards.size() - 3];
  };

  for (auto [t, pt] : llvm::enumerate(tensors)) {
    const TensorLayout &l = pt.layout;
    int64_t eb = l.elementBytes;
    auto srcShapes = l.localShapes(true), dstShapes = l.localShapes(false);
    for (auto &[r, shape] : srcShapes)
      shardEntry(r, t)[1] = l.shardBytes(shape);
    for (auto &[r, shape] : dstShapes)
      shardEntry(r, t)[2] = l.shardBytes(shape);
    // Where each rank received each box: a relay packs from there.
    std::map<std::vector<int64_t>, size_t> deliveredBy;
    for (size_t i = 0; i < pt.table.size(); ++i) {
      PieceTable::Piece p = pt.table[i];
      std::vector<int64_t> key = {p.dstRank()};
      key.insert(key.end(), p.globalOffset().begin(), p.globalOffset().end());
      deliveredBy[key] = i;
    }
    for (size_t i = 0; i < pt.table.size(); ++i) {
      PieceTable::Piece p = pt.table[i];
      const auto &dstShape = dstShapes[p.dstRank()];
      if (p.via() == -1 && p.srcRank() == p.dstRank()) {
        appendCopyDescriptor(rankData(p.dstRank()).copies, t,
                             srcShapes[p.srcRank()], p.srcOffset(), dstShape,
                             p.dstOffset(), p.sizes(), eb);
        continue;
      }
      int64_t from = p.via() == -1 ? p.srcRank() : p.via();
      Message &send = rankData(from).sends[p.step()][p.dstRank()];
      if (p.via() == -1) {
        appendBoxDescriptor(send.pack, t, 0, srcShapes[from], p.srcOffset(),
                            p.sizes(), eb);
      } else {
        std::vector<int64_t> key = {p.via()};
        key.insert(key.end(), p.globalOffset().begin(), p.globalOffset().end());
        auto relayIt = deliveredBy.find(key);
        if (relayIt == deliveredBy.end() ||
            pt.table[relayIt->second].sizes() != p.sizes()) {
          plan->pieces[t].emitOpError()
              << "piece " << i << ": relay rank " << p.via()
              << " does not receive this box";
          return signalPassFailure();
        }
        PieceTable::Piece relay = pt.table[relayIt->second];
        appendBoxDescriptor(send.pack, t, 1, dstShapes[from], relay.dstOffset(),
                            p.sizes(), eb);
      }
      Message &recv = rankData(p.dstRank()).recvs[p.step()][from];
      appendBoxDescriptor(recv.unpack, t, 1, dstShape, p.dstOffset(), p.sizes(),
                          eb);
      int64_t bytes = p.numElements() * eb;
      send.bytes += bytes;
      recv.bytes += bytes;
    }
  }

  // Build the plan, hashing everything the generated code will act on.
  OpBuilder b(&getContext());
  Fingerprint fp;
  fp.add(name);
  fp.add(static_cast<uint64_t>(numRanks));
  SmallVector<StringRef> names;
  for (const PlannedTensor &pt : tensors) {
    names.push_back(pt.layout.name);
    fp.add(pt.layout.name);
  }
  Location loc = module.getLoc();
  auto planOp =
      rt::PlanOp::create(b, loc, name, numRanks, b.getStrArrayAttr(names), 0,
                         /*staging_budget=*/nullptr);
  Block *planBody = b.createBlock(&planOp.getBody());
  auto align = [](int64_t x) { return (x + 15) & ~int64_t(15); };
  for (auto &[r, d] : ranks) {
    int64_t workspace = 0;
    std::set<int64_t> steps;
    for (auto &[s, m] : d.sends)
      steps.insert(s);
    for (auto &[s, m] : d.recvs)
      steps.insert(s);
    for (int64_t s : steps) {
      int64_t at = 0;
      for (auto &[peer, m] : d.sends[s])
        at = align(at + m.bytes);
      for (auto &[peer, m] : d.recvs[s])
        at = align(at + m.bytes);
      workspace = std::max(workspace, at);
    }
    fp.add(static_cast<uint64_t>(r));
    fp.add(static_cast<uint64_t>(workspace));
    fp.add(d.shards);
    fp.add(d.copies);
    b.setInsertionPointToEnd(planBody);
    auto rankOp = rt::RankOp::create(b, loc, r, workspace, d.shards);
    b.createBlock(&rankOp.getBody());
    if (!d.copies.empty())
      rt::CopyOp::create(b, loc, d.copies);
    for (int64_t s : steps) {
      OpBuilder::InsertionGuard guard(b);
      auto stepOp = rt::StepOp::create(b, loc, s);
      b.createBlock(&stepOp.getBody());
      fp.add(static_cast<uint64_t>(s));
      int64_t at = 0;
      for (auto &[peer, m] : d.sends[s]) {
        rt::SendOp::create(b, loc, peer, m.bytes, at, m.pack);
        fp.add({peer, m.bytes, at});
        fp.add(m.pack);
        at = align(at + m.bytes);
      }
      for (auto &[peer, m] : d.recvs[s]) {
        rt::RecvOp::create(b, loc, peer, m.bytes, at, m.unpack);
        fp.add({peer, m.bytes, at});
        fp.add(m.unpack);
        at = align(at + m.bytes);
      }
    }
  }
  planOp.setFingerprint(static_cast<int64_t>(fp.h));
  if (auto budget = ReshardDialect::StagingBudgetAttrHelper(&getContext())
                        .getAttr(module))
    planOp.setStagingBudget(budget.getInt());

  // The runtime program replaces the layout and its tables.
  for (Operation &op :
       llvm::make_early_inc_range(module.getBody()->getOperations()))
    if (isa<RedistributeOp, PiecesOp, MeshOp, TopologyOp>(op))
      op.erase();
  module.getBody()->push_back(planOp);
}
