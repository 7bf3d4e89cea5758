//===- ReshardToRuntime.cpp - A planned module to a compact reshard_rt plan
//===//
//
// Classes become their pieces with box descriptors, groups stay groups, and
// the transfers of each stream (one sender, one receiver, one phase) become
// one item list, shared by both ends: the program grows with classes,
// groups and streams, never with the pieces of tensors. The workspace and
// the fingerprint are computed on the encoded tables, by the same code the
// verifier and the generated code use.
//
//===----------------------------------------------------------------------===//
#include "reshard/Conversion/Passes.h"

#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"
#include "reshard/Dialect/Runtime/IR/PlanEncoding.h"
#include "reshard/Layout/BoxDescriptor.h"
#include "reshard/Layout/Geometry.h"
#include "reshard/Layout/Quant.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/SetVector.h"

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

struct ConvertReshardToRuntimePass
    : public reshard::impl::ConvertReshardToRuntimeBase<
          ConvertReshardToRuntimePass> {
  using Base::Base;
  void runOnOperation() override;
};

bool isCIdentifier(StringRef s) {
  if (s.empty() ||
      !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  return llvm::all_of(s, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

/// The reshard_rt.class of one plan class.
void buildClass(OpBuilder &b, Location loc, int64_t index,
                const PlanClass &cls) {
  const TensorLayout &l = cls.exemplar;
  MeshAxisSplit split[2] = {MeshAxisSplit(l.src.mesh.shape, l.src.sharding),
                            MeshAxisSplit(l.dst.mesh.shape, l.dst.sharding)};
  ShardGeometry geometry[2] = {l.srcGeometry(), l.dstGeometry()};
  SmallVector<int64_t> comboOf[2], shapes[2];
  SmallVector<SmallVector<int64_t>> shapeOf[2];
  for (int side = 0; side < 2; ++side) {
    for (int64_t d = 0; d < split[side].numDevices(); ++d)
      comboOf[side].push_back(split[side].comboOf(d));
    for (int64_t c = 0; c < split[side].numCombos(); ++c) {
      shapeOf[side].push_back(
          geometry[side].localShape(split[side].coordsOf(c)));
      llvm::append_range(shapes[side], shapeOf[side].back());
    }
  }
  auto dimOrder = [&](const Sharding &s) {
    return s.dimOrder.empty() ? DenseI64ArrayAttr()
                              : b.getDenseI64ArrayAttr(s.dimOrder);
  };
  auto op =
      rt::ClassOp::create(b, loc, index, l.elementBytes, l.shape.size(),
                          comboOf[0], shapes[0], comboOf[1], shapes[1],
                          dimOrder(l.src.sharding), dimOrder(l.dst.sharding));
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&op.getBody());
  MLIRContext *ctx = b.getContext();
  int64_t eb = l.elementBytes;
  ArrayRef<int64_t> srcOrder = l.src.sharding.dimOrder,
                    dstOrder = l.dst.sharding.dimOrder;
  for (size_t i = 0; i < cls.pattern.size(); ++i) {
    ClassPattern::Piece p = cls.pattern[i];
    ArrayRef<int64_t> srcShape = shapeOf[0][p.srcCombo()],
                      dstShape = shapeOf[1][p.dstCombo()];
    SmallVector<int64_t> pack =
        boxDescriptor(srcShape, srcOrder, p.srcOffset(), p.sizes(), eb);
    SmallVector<int64_t> unpack =
        boxDescriptor(dstShape, dstOrder, p.dstOffset(), p.sizes(), eb);
    SmallVector<int64_t> copy =
        copyDescriptor(srcShape, srcOrder, p.srcOffset(), dstShape, dstOrder,
                       p.dstOffset(), p.sizes(), eb);
    auto box = [&](ArrayRef<int64_t> d) {
      return rt::BoxAttr::get(ctx, d[0], d[1], d.drop_front(3));
    };
    rt::PieceOp::create(
        b, loc, p.dstCombo(), p.srcCombo(), p.sizes(), p.dstOffset(),
        p.srcOffset(), box(pack), box(unpack),
        rt::CopyAttr::get(ctx, copy[0], copy[1], copy[2],
                          ArrayRef<int64_t>(copy).drop_front(4)));
  }
}

/// Rows of 5 per transfer: group, piece, start, stride, count (stride 1
/// for a single member, as the printer assumes).
void appendItem(SmallVectorImpl<int64_t> &rows, const TransferGroup &t) {
  rows.append({t.group, t.piece, t.memberStart,
               t.memberCount == 1 ? 1 : t.memberStride, t.memberCount});
}

/// A quantizing shard's runs along one dim, for the quantizer: a block
/// starts at each run, so a run that ends on a block boundary (whole
/// blocks) may go on into the next one with the same blocks. The side
/// that quantizes holds whole blocks, so every run but the one at the
/// dim's end is whole blocks: at most 2 runs remain, whatever the storage
/// order (a Megatron shard of Qwen3-Next's in_proj_qkvz has 4 a key
/// group), within what the GPU quantizer takes.
SmallVector<int64_t> quantRuns(ArrayRef<DimSegment> segments, int64_t block) {
  SmallVector<int64_t> runs;
  for (const DimSegment &s : segments) {
    if (!runs.empty() && runs.back() % block == 0)
      runs.back() += s.size;
    else
      runs.push_back(s.size);
  }
  return runs;
}

/// The `quant_classes` and `quant_tensors` rows of the plan's quantized
/// tensors (RuntimeOps.td): one class row per payload class, with the runs
/// of every combo's shard per dim on the side that quantizes.
LogicalResult quantRows(const PlanModule &plan,
                        SmallVectorImpl<int64_t> &classes,
                        SmallVectorImpl<int64_t> &tensors) {
  const PlanModel &model = plan.model;
  std::map<int64_t, int64_t> rowOf; // payload class -> row
  for (auto [t, q] : llvm::enumerate(model.tensorQuant)) {
    if (q.role != TensorQuant::Payload)
      continue;
    int64_t cls = model.groups[model.tensorGroup[t]].cls;
    const TensorLayout &l = model.classes[cls].exemplar;
    RedistributeOp op = plan.tensors[t];
    std::optional<int> input =
        quantInputType(getDtypeName(op.getSrcTensorType().getElementType()));
    if (!input)
      return op.emitOpError() << "cannot quantize its element type";
    auto [it, inserted] = rowOf.try_emplace(cls, rowOf.size());
    if (inserted) {
      const QuantSpec &quant = l.dst.sharding.quant;
      SmallVector<int64_t> blocks = quant.blockSizes(l.shape.size());
      classes.push_back(quant.kind == QuantSpec::Mx ? engine::kQuantMx
                        : quant.ue8m0               ? engine::kQuantBlockUe8m0
                                                    : engine::kQuantBlock);
      classes.push_back(q.onReceiver ? engine::kQuantOnReceiver
                                     : engine::kQuantOnSender);
      classes.push_back(l.shape.size());
      classes.append(blocks.begin(), blocks.end());
      const SideLayout &side = q.onReceiver ? l.dst : l.src;
      MeshAxisSplit split(side.mesh.shape, side.sharding);
      ShardGeometry geometry = q.onReceiver ? l.dstGeometry() : l.srcGeometry();
      classes.push_back(split.numCombos());
      for (int64_t c = 0; c < split.numCombos(); ++c) {
        SmallVector<int64_t> coords = split.coordsOf(c);
        for (unsigned d = 0; d < l.shape.size(); ++d) {
          SmallVector<int64_t> runs =
              quantRuns(geometry.segments(d, coords), blocks[d]);
          classes.push_back(runs.size());
          classes.append(runs.begin(), runs.end());
        }
      }
    }
    tensors.append({static_cast<int64_t>(t), q.partner, *input, it->second});
  }
  return success();
}

} // namespace

void ConvertReshardToRuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  std::string name = planName;
  if (name.empty())
    name = module.getSymName() ? module.getSymName()->str() : "reshard_plan";
  if (!isCIdentifier(name)) {
    emitError(module.getLoc())
        << "plan name '" << name
        << "' is not a C identifier; give the module a name "
           "that is, or set the plan name (reshard-compile --plan-name, "
           "reshard-opt convert-reshard-to-runtime{plan-name=...})";
    return signalPassFailure();
  }
  FailureOr<PlanModule> plan = PlanModule::load(module, getArgument());
  if (failed(plan))
    return signalPassFailure();
  for (Operation &op : module.getBody()->getOperations())
    if (isa<PiecesOp>(op)) {
      op.emitOpError() << "is the explicit reference form (reshard-expand); "
                          "the lowering works on classes and groups";
      return signalPassFailure();
    }
  const PlanModel &model = plan->model;
  if (model.numRanks() > kMaxPlanRanks) {
    for (MeshOp mesh : module.getOps<MeshOp>())
      for (int64_t r : mesh.getRanks())
        if (r >= kMaxPlanRanks) {
          mesh.emitOpError()
              << "holds rank " << r << "; a lowered plan's ranks are below "
              << "2^24 (its code keeps a table with an entry per rank): "
                 "number the ranks from 0";
          return signalPassFailure();
        }
  }
  std::vector<TransferGroup> transfers = enumerateTransfers(model);
  std::vector<StreamContent> streams = collectStreams(model, transfers);
  if (failed(plan->checkSchedule(streams)))
    return signalPassFailure();
  PlanSchedule schedule = scheduleOf(model, streams);
  orderRelays(model, transfers, schedule, streams);

  OpBuilder b(ctx);
  SmallVector<StringRef> names, dtypes;
  for (RedistributeOp op : plan->tensors) {
    names.push_back(op.getSymName());
    // A payload quantized on its senders moves (and lands) as FP8; its
    // source's own type is in its quant_tensors row.
    dtypes.push_back(getDtypeName(
        op->hasAttr(kQuantizeOnAttr) ? op.getDstTensorType().getElementType()
                                     : op.getSrcTensorType().getElementType()));
  }
  std::optional<int64_t> budget, maxOps;
  if (model.schedule) {
    budget = schedule.stagingBudget;
    maxOps = schedule.maxOpsPerStep;
  }
  SmallVector<int64_t> quantClasses, quantTensors;
  if (failed(quantRows(*plan, quantClasses, quantTensors)))
    return signalPassFailure();
  auto planOp = rt::PlanOp::create(
      b, module.getLoc(), name, model.numRanks(), b.getStrArrayAttr(names),
      b.getStrArrayAttr(dtypes), 0,
      budget ? b.getI64IntegerAttr(*budget) : IntegerAttr(),
      maxOps ? b.getI64IntegerAttr(*maxOps) : IntegerAttr(),
      model.schedule && schedule.receivesAhead,
      quantTensors.empty() ? DenseI64ArrayAttr()
                           : b.getDenseI64ArrayAttr(quantClasses),
      quantTensors.empty() ? DenseI64ArrayAttr()
                           : b.getDenseI64ArrayAttr(quantTensors));
  Block *body = b.createBlock(&planOp.getBody());
  b.setInsertionPointToEnd(body);

  // Meshes: each distinct rank list once.
  std::map<std::vector<int64_t>, int64_t> meshIndex;
  auto meshOf = [&](const MeshSpec &m) {
    std::vector<int64_t> ranks(m.ranks.begin(), m.ranks.end());
    auto [it, inserted] = meshIndex.try_emplace(ranks, meshIndex.size());
    if (inserted)
      rt::MeshOp::create(b, module.getLoc(), it->second, m.ranks);
    return it->second;
  };
  SmallVector<std::pair<int64_t, int64_t>> groupMeshes;
  for (const PlanGroup &g : model.groups)
    groupMeshes.push_back({meshOf(g.srcMesh), meshOf(g.dstMesh)});
  for (auto [c, cls] : llvm::enumerate(model.classes))
    buildClass(b, plan->classes[c].getLoc(), c, cls);
  SmallVector<Location> groupLocs;
  for (auto [g, group] : llvm::enumerate(model.groups)) {
    Location loc = plan->groups[g].getLoc();
    rt::GroupOp::create(b, loc, g, group.cls, groupMeshes[g].first,
                        groupMeshes[g].second, group.members);
    groupLocs.push_back(
        NameLoc::get(b.getStringAttr(plan->groups[g].getSymName()), loc));
  }

  // One item list per stream, and one per rank for its local copies.
  std::map<int64_t, SmallVector<int64_t>> copies; // rank -> rows
  for (const TransferGroup &t : transfers)
    if (t.kind == TransferKind::Copy)
      appendItem(copies[t.receiver], t);
  // Equal lists are stored once (a local copy often moves what a stream
  // moves elsewhere).
  std::map<std::vector<int64_t>, int64_t> listIndex;
  auto listOf = [&](ArrayRef<int64_t> rows, Location loc) {
    auto [it, inserted] = listIndex.try_emplace(
        std::vector<int64_t>(rows.begin(), rows.end()), listIndex.size());
    if (inserted)
      rt::ItemsOp::create(b, loc, it->second, rows);
    return it->second;
  };
  SmallVector<int64_t> streamList;
  SmallVector<Location> streamLocs;
  for (const StreamContent &s : streams) {
    SmallVector<int64_t> rows;
    llvm::SetVector<int64_t> groups;
    for (size_t i : s.transfers) {
      appendItem(rows, transfers[i]);
      groups.insert(transfers[i].group);
    }
    SmallVector<Location> locs;
    for (int64_t g : groups)
      locs.push_back(groupLocs[g]);
    streamLocs.push_back(FusedLoc::get(ctx, locs));
    streamList.push_back(listOf(rows, streamLocs.back()));
  }
  std::map<int64_t, int64_t> copyList;
  for (auto &[rank, rows] : copies)
    copyList[rank] = listOf(rows, module.getLoc());

  // Rank programs: copies, sends by (receiver, phase), receives by
  // (sender, phase). `streams` is sorted by (sender, receiver, phase).
  std::map<int64_t, SmallVector<size_t>> sendsOf, recvsOf;
  for (size_t i = 0; i < streams.size(); ++i) {
    sendsOf[streams[i].sender].push_back(i);
    recvsOf[streams[i].receiver].push_back(i);
  }
  for (auto &[rank, list] : recvsOf)
    llvm::stable_sort(list, [&](size_t a, size_t b) {
      return std::pair(streams[a].sender, streams[a].phase) <
             std::pair(streams[b].sender, streams[b].phase);
    });
  std::set<int64_t> active;
  for (auto &[rank, rows] : copies)
    active.insert(rank);
  for (const StreamContent &s : streams)
    active.insert({s.sender, s.receiver});
  // Ranks, phases, quotas and sizes repeat over a plan's streams: each
  // attribute is made once (a uniquer lookup per value, not per use).
  llvm::DenseMap<int64_t, IntegerAttr> i64Attrs;
  auto i64 = [&](int64_t v) {
    IntegerAttr &attr = i64Attrs[v];
    if (!attr)
      attr = b.getI64IntegerAttr(v);
    return attr;
  };
  for (int64_t rank : active) {
    b.setInsertionPointToEnd(body);
    auto rankOp = rt::RankOp::create(b, module.getLoc(), rank, 0);
    b.createBlock(&rankOp.getBody());
    if (auto it = copyList.find(rank); it != copyList.end())
      rt::CopyOp::create(b, module.getLoc(), it->second);
    for (size_t i : sendsOf[rank]) {
      const StreamContent &s = streams[i];
      const PlanStream &row = schedule.streams[i];
      rt::SendOp::create(b, streamLocs[i], i64(s.receiver), i64(s.phase),
                         i64(row.start), i64(row.quota), i64(s.bytes),
                         i64(streamList[i]));
    }
    for (size_t i : recvsOf[rank]) {
      const StreamContent &s = streams[i];
      const PlanStream &row = schedule.streams[i];
      rt::RecvOp::create(b, streamLocs[i], i64(s.sender), i64(s.phase),
                         i64(row.start), i64(row.quota), i64(s.bytes),
                         i64(streamList[i]));
    }
  }

  // The workspace and the fingerprint, on the tables the engine runs.
  std::unique_ptr<rt::EncodedPlan> encoded = rt::EncodedPlan::encode(planOp);
  if (!encoded)
    return signalPassFailure();
  // Each rank's largest step, walked over the steps (in parallel: the
  // engine's tables are read only).
  SmallVector<rt::RankOp> rankOps(body->getOps<rt::RankOp>());
  std::vector<int64_t> workspace(rankOps.size());
  parallelFor(ctx, 0, rankOps.size(), [&](size_t i) {
    workspace[i] =
        engine::program_workspace(encoded->view(), encoded->programs[i]);
  });
  for (auto [i, rankOp] : llvm::enumerate(rankOps))
    rankOp.setWorkspace(workspace[i]);
  planOp.setFingerprint(static_cast<int64_t>(encoded->view().fingerprint));

  // The runtime program replaces the layout and its plan.
  for (Operation &op :
       llvm::make_early_inc_range(module.getBody()->getOperations()))
    if (isa<RedistributeOp, MeshOp, TopologyOp, ClassOp, GroupOp, ScheduleOp>(
            op))
      op.erase();
  module.getBody()->push_back(planOp);
}
