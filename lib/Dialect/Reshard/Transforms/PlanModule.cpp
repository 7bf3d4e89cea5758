//===- PlanModule.cpp - Load and store a module's plan --------------------===//
#include "reshard/Dialect/Reshard/Transforms/PlanModule.h"

#include "reshard/Dialect/Reshard/IR/LayoutInterop.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;
using namespace reshard;

/// The one topology of the module's tensors: those that name one must name
/// the same, and those that name none follow it.
static FailureOr<std::optional<TopologySpec>>
moduleTopology(ArrayRef<RedistributeOp> ops, SymbolTableCollection &symbols) {
  std::optional<TopologySpec> topology;
  RedistributeOp first; // the first tensor that names a topology
  for (RedistributeOp op : ops) {
    FlatSymbolRefAttr ref = op.getTopologyAttr();
    if (!ref)
      continue;
    if (!first) {
      first = op;
      if (auto topo =
              symbols.lookupNearestSymbolFrom<TopologyOp>(op, ref.getAttr()))
        topology = topo.toSpec();
      continue;
    }
    if (ref != first.getTopologyAttr())
      return op.emitOpError()
             << "names topology " << ref << " and @" << first.getSymName()
             << " names " << first.getTopologyAttr()
             << "; a plan models one topology for all its tensors (a tensor "
                "that names none follows it)";
  }
  return topology;
}

/// Refuses a module whose tensors' byte sizes, each times the ranks of its
/// two meshes, add up to kMaxPlanBytes or more: no count of its plan could
/// be trusted to fit 64 bits. Named at the tensor that crosses the limit.
static LogicalResult checkPlanBytes(ArrayRef<RedistributeOp> ops,
                                    SymbolTableCollection &symbols) {
  llvm::DenseMap<Attribute, int64_t> meshRanks;
  auto ranksOf = [&](RedistributeOp op, FlatSymbolRefAttr ref) -> int64_t {
    auto [it, fresh] = meshRanks.try_emplace(ref, 0);
    if (fresh)
      if (auto mesh =
              symbols.lookupNearestSymbolFrom<MeshOp>(op, ref.getAttr()))
        it->second = mesh.getRanks().size();
    return it->second;
  };
  int64_t total = 0;
  for (RedistributeOp op : ops) {
    RankedTensorType type = op.getSrcTensorType();
    // Below 2^63: the verifier checks the byte size.
    int64_t bytes = type.getNumElements() *
                    getElementTypeBytes(type.getElementType()).value_or(0);
    int64_t ranks =
        ranksOf(op, op.getSrcMeshAttr()) + ranksOf(op, op.getDstMeshAttr());
    std::optional<int64_t> term = llvm::checkedMul(bytes, ranks);
    std::optional<int64_t> sum = term ? llvm::checkedAdd(total, *term) : term;
    if (!sum || *sum >= kMaxPlanBytes)
      return op.emitOpError()
             << "brings the plan over its size limit: the tensors' byte "
                "sizes, each times the ranks of its two meshes ("
             << ranks << " for this one), add up to 2^60 bytes or more, and "
             << "every byte count of a plan must fit 64 bits";
    total = *sum;
  }
  return success();
}

std::string reshard::freeSymbolName(const llvm::StringSet<> &taken,
                                    StringRef base, int64_t &next) {
  while (true) {
    std::string name = (base + Twine(next++)).str();
    if (!taken.contains(name))
      return name;
  }
}

FailureOr<PlanModule> PlanModule::load(ModuleOp module, StringRef passName) {
  for (PiecesOp op : module.getOps<PiecesOp>())
    return op.emitOpError()
           << "is the explicit reference form (reshard-expand writes it); "
           << passName
           << " works on classes and groups: give it the module before "
              "reshard-expand";
  PlanModule plan;
  if (Attribute a = module->getAttr(kRelayLaneSpanAttr)) {
    // getInt() asserts a signless or index type of at most 64 bits.
    auto span = dyn_cast<IntegerAttr>(a);
    bool readable = span && (span.getType().isIndex() ||
                             (span.getType().isSignlessInteger() &&
                              span.getType().getIntOrFloatBitWidth() > 1 &&
                              span.getType().getIntOrFloatBitWidth() <= 64));
    if (!readable || span.getInt() < 1)
      return module.emitOpError()
             << "has " << kRelayLaneSpanAttr << " = " << a
             << "; it must be an integer of at least 1 (the ranks a relay "
                "lane spans)";
    plan.model.relayLaneSpan = span.getInt();
  }
  llvm::StringMap<int64_t> tensorIndex;
  for (RedistributeOp op : module.getOps<RedistributeOp>()) {
    tensorIndex[op.getSymName()] = plan.tensors.size();
    plan.tensors.push_back(op);
    plan.model.tensorNames.push_back(op.getSymName().str());
  }
  SymbolTableCollection symbols;
  if (failed(checkPlanBytes(plan.tensors, symbols)))
    return failure();
  // Quantized destinations, as reshard-quantize marked them.
  for (auto [t, op] : llvm::enumerate(plan.tensors)) {
    auto of = op->getAttrOfType<FlatSymbolRefAttr>(kScalesOfAttr);
    bool payload = op->hasAttr(kQuantizeOnAttr);
    if (!of && !payload)
      continue;
    plan.model.tensorQuant.resize(plan.tensors.size());
    TensorQuant &q = plan.model.tensorQuant[t];
    StringRef partner = of ? of.getValue() : StringRef();
    std::string scales = (op.getSymName() + kScaleSuffix).str();
    if (payload)
      partner = scales;
    auto it = tensorIndex.find(partner);
    if (it == tensorIndex.end())
      return op.emitOpError()
             << (payload ? "is quantized but has no scales "
                           "redistribution @\""
                         : "names the scales of @\"")
             << partner
             << (payload ? "\"; run reshard-quantize on the layout"
                         : "\", which is not a tensor");
    q.role = payload ? TensorQuant::Payload : TensorQuant::Scales;
    q.partner = it->second;
    q.onReceiver =
        isQuantizedOnReceiver(payload ? op : plan.tensors[q.partner]);
    if (payload) {
      RankedTensorType type = op.getSrcTensorType();
      q.fullPrecisionBytes =
          type.getNumElements() *
          getElementTypeBytes(type.getElementType()).value_or(0);
    }
  }

  FailureOr<std::optional<TopologySpec>> topology =
      moduleTopology(plan.tensors, symbols);
  if (failed(topology))
    return failure();
  plan.model.topology = *topology;

  llvm::StringMap<int64_t> classIndex;
  for (ClassOp op : module.getOps<ClassOp>()) {
    auto exemplar = symbols.lookupNearestSymbolFrom<RedistributeOp>(
        op, op.getExemplarAttr().getAttr());
    FailureOr<TensorLayout> layout =
        exemplar ? getTensorLayout(exemplar, symbols)
                 : FailureOr<TensorLayout>(op.emitOpError()
                                           << "exemplar is not a tensor");
    if (failed(layout))
      return failure();
    classIndex[op.getSymName()] = plan.classes.size();
    plan.classes.push_back(op);
    plan.model.classes.push_back({std::move(*layout), op.toPattern()});
  }

  plan.model.tensorGroup.assign(plan.tensors.size(), -1);
  for (GroupOp op : module.getOps<GroupOp>()) {
    auto cls = classIndex.find(op.getClassName());
    if (cls == classIndex.end())
      return op.emitOpError()
             << "class " << op.getClassNameAttr() << " is not a reshard.class";
    PlanGroup g;
    g.cls = cls->second;
    for (auto [spec, ref] : {std::pair{&g.srcMesh, op.getSrcMeshAttr()},
                             std::pair{&g.dstMesh, op.getDstMeshAttr()}}) {
      auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(op, ref.getAttr());
      if (!mesh)
        return op.emitOpError() << "mesh " << ref << " is not a reshard.mesh";
      *spec = mesh.toSpec();
    }
    int64_t index = plan.groups.size();
    for (Attribute attr : op.getTensors()) {
      StringRef name = cast<FlatSymbolRefAttr>(attr).getValue();
      auto it = tensorIndex.find(name);
      if (it == tensorIndex.end())
        return op.emitOpError()
               << "tensor @" << name << " is not a reshard.redistribute";
      int64_t &slot = plan.model.tensorGroup[it->second];
      if (slot != -1) {
        InFlightDiagnostic diag = op.emitOpError()
                                  << "lists tensor @" << name
                                  << ", which is already in a group";
        diag.attachNote(plan.groups[slot].getLoc()) << "its first group";
        return failure();
      }
      if (!g.members.empty() && it->second < g.members.back())
        return op.emitOpError() << "lists tensor @" << name
                                << " out of module order; a group lists "
                                   "its tensors as the module declares them";
      slot = index;
      g.members.push_back(it->second);
    }
    if (std::optional<Routing> routing = op.getRouting())
      g.routing = *routing == Routing::Balanced ? GroupRouting::Balanced
                                                : GroupRouting::Direct;
    g.routes = RouteRow::fromRows(op.getRoutes());
    plan.groups.push_back(op);
    plan.model.groups.push_back(std::move(g));
    // A fed domain's feeder is another network domain of the piece, fed
    // by the holders.
    const PlanGroup &added = plan.model.groups.back();
    for (const RouteRow &r : added.routes) {
      if (r.feeder < 0)
        continue;
      PieceDeliveries d = deliveriesOf(plan.model, index, r.piece);
      auto isNetwork = [&](int64_t domain) {
        return llvm::any_of(d.networkDomains,
                            [&](const PieceDeliveries::Domain &x) {
                              return x.domain == domain;
                            });
      };
      if (!isNetwork(r.key) || !isNetwork(r.feeder) ||
          added.route(r.piece, RouteKind::Network, r.feeder).feeder != -1)
        return op.emitOpError()
               << "feeds piece " << r.piece << " into domain " << r.key
               << " from domain " << r.feeder
               << ", but both must be domains the piece crosses the network "
                  "into, and the feeder one its holders feed";
    }
  }
  for (auto [t, group] : llvm::enumerate(plan.model.tensorGroup))
    if (group == -1)
      return plan.tensors[t].emitOpError()
             << "is in no reshard.group; plan the module first "
                "(--reshard-plan-pipeline=lower=false, or --reshard-intersect "
                "before --"
             << passName << ")";

  for (ScheduleOp op : module.getOps<ScheduleOp>()) {
    if (plan.schedule) {
      InFlightDiagnostic diag = op.emitOpError()
                                << "is a second schedule; a plan has one";
      diag.attachNote(plan.schedule.getLoc()) << "the first";
      return failure();
    }
    plan.schedule = op;
    plan.model.schedule = PlanSchedule{
        op.getStagingBudgetAttr().getInt(), op.getMaxOpsPerStepAttr().getInt(),
        PlanStream::fromRows(op.getStreams()), op.getReceivesAhead()};
    plan.model.relayLanes = op.getRelayLanes();
    if (std::optional<ArrayRef<int64_t>> rows = op.getTransits())
      plan.model.transits = PlanTransit::fromRows(*rows);
    std::vector<int64_t> planRanks = plan.model.planRanks();
    for (const PlanTransit &t : plan.model.transits) {
      const PlanModel &m = plan.model;
      if (!std::binary_search(planRanks.begin(), planRanks.end(), t.via))
        return op.emitOpError()
               << "routes the stream " << t.sender << " -> " << t.receiver
               << " through rank " << t.via
               << ", which is in no mesh of the plan; a transit is a GPU "
                  "that runs the plan";
      if (m.domainOf(t.sender) == m.domainOf(t.receiver) ||
          (m.domainOf(t.via) != m.domainOf(t.sender) &&
           m.domainOf(t.via) != m.domainOf(t.receiver)))
        return op.emitOpError()
               << "routes the stream " << t.sender << " -> " << t.receiver
               << " through rank " << t.via
               << ", but a transit joins two NVLink domains and is a GPU of "
                  "one of them (ranks "
               << t.sender << ", " << t.receiver << " and " << t.via
               << " are in domains " << m.domainOf(t.sender) << ", "
               << m.domainOf(t.receiver) << " and " << m.domainOf(t.via) << ")";
    }
  }
  return plan;
}

LogicalResult
PlanModule::checkSchedule(const std::vector<StreamContent> &streams) const {
  if (!model.schedule)
    return success();
  ScheduleOp op = schedule;
  return checkScheduleMatches(model, streams, op.getLoc());
}

LogicalResult
reshard::checkScheduleMatches(const PlanModel &model,
                              const std::vector<StreamContent> &streams,
                              Location scheduleLoc) {
  if (!model.schedule)
    return success();
  const std::vector<PlanStream> &rows = model.schedule->streams;
  bool same = rows.size() == streams.size();
  for (size_t i = 0; same && i < rows.size(); ++i)
    same = rows[i].sender == streams[i].sender &&
           rows[i].receiver == streams[i].receiver &&
           rows[i].phase == streams[i].phase;
  // A transit that reroutes no holder stream of the routing is stale.
  for (const PlanTransit &t : model.transits) {
    auto it = llvm::lower_bound(
        streams, std::make_tuple(t.sender, t.via, kTransitInPhase + t.receiver),
        [](const StreamContent &s, const auto &key) {
          return std::make_tuple(s.sender, s.receiver, s.phase) < key;
        });
    const PlanStream *in =
        model.schedule->find(t.sender, t.via, kTransitInPhase + t.receiver);
    const PlanStream *out =
        model.schedule->find(t.via, t.receiver, kTransitOutPhase + t.sender);
    if (in && out && (out->quota != in->quota || out->start != in->start + 1))
      return emitError(scheduleLoc)
             << "'" << ScheduleOp::getOperationName() << "' op routes the "
             << "stream " << t.sender << " -> " << t.receiver << " through "
             << t.via << ", whose second stream must start one step after "
             << "the first at the same quota (starts " << in->start << " and "
             << out->start << ", quotas " << in->quota << " and " << out->quota
             << ")";
    if (it == streams.end() || it->sender != t.sender ||
        it->receiver != t.via || it->phase != kTransitInPhase + t.receiver)
      return emitError(scheduleLoc)
             << "'" << ScheduleOp::getOperationName() << "' op routes the "
             << "stream " << t.sender << " -> " << t.receiver << " through "
             << t.via << ", but the plan's routing sends nothing from rank "
             << t.sender << " to rank " << t.receiver
             << "; run reshard-schedule after the routing";
  }
  if (same)
    return success();
  return emitError(scheduleLoc)
         << "'" << ScheduleOp::getOperationName() << "' op has " << rows.size()
         << " streams but the plan's routing makes " << streams.size()
         << " (a different set); run reshard-schedule after the routing";
}

void PlanModule::storeRoutes(ModuleOp module) {
  if (model.relayLaneSpan == 1)
    module->removeAttr(kRelayLaneSpanAttr);
  else
    module->setAttr(kRelayLaneSpanAttr,
                    IntegerAttr::get(IntegerType::get(module.getContext(), 64),
                                     model.relayLaneSpan));
  MLIRContext *ctx = tensors.empty() ? nullptr : tensors.front()->getContext();
  for (auto [op, g] : llvm::zip(groups, model.groups)) {
    if (g.routing == GroupRouting::Unrouted) {
      op.removeRoutingAttr();
    } else {
      op.setRoutingAttr(RoutingAttr::get(
          ctx, g.routing == GroupRouting::Balanced ? Routing::Balanced
                                                   : Routing::Direct));
    }
    op.setRoutes(RouteRow::toRows(g.routes));
  }
}

void PlanModule::storeSchedule(ModuleOp module) {
  if (schedule)
    schedule.erase();
  schedule = nullptr;
  if (!model.schedule)
    return;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  schedule = ScheduleOp::create(
      b, module.getLoc(), model.schedule->stagingBudget,
      model.schedule->maxOpsPerStep,
      PlanStream::toRows(model.schedule->streams), model.relayLanes,
      model.transits.empty()
          ? DenseI64ArrayAttr()
          : b.getDenseI64ArrayAttr(PlanTransit::toRows(model.transits)),
      model.schedule->receivesAhead);
}

LogicalResult reshard::intersectModule(ModuleOp module) {
  SymbolTableCollection symbols;
  SmallVector<RedistributeOp> ops(module.getOps<RedistributeOp>());
  if (failed(checkPlanBytes(ops, symbols)))
    return failure();
  std::vector<TensorLayout> layouts;
  layouts.reserve(ops.size());
  for (RedistributeOp op : ops) {
    FailureOr<TensorLayout> layout = getTensorLayout(op, symbols);
    if (failed(layout))
      return failure();
    layouts.push_back(std::move(*layout));
  }
  FailureOr<std::optional<TopologySpec>> topology =
      moduleTopology(ops, symbols);
  if (failed(topology))
    return failure();
  PlanModel model = buildPlanModel(std::move(layouts), *topology);
  // One op per class and per group, after the layout.
  llvm::StringSet<> taken;
  for (Operation &op : module.getBody()->getOperations())
    if (auto name =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      taken.insert(name.getValue());
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  MLIRContext *ctx = module.getContext();
  int64_t nextClass = 0, nextGroup = 0;
  std::vector<int64_t> exemplar(model.classes.size(), -1);
  for (size_t t = 0; t < ops.size(); ++t) {
    int64_t &first = exemplar[model.groups[model.tensorGroup[t]].cls];
    if (first < 0)
      first = t;
  }
  SmallVector<std::string> classNames;
  for (auto [c, cls] : llvm::enumerate(model.classes)) {
    classNames.push_back(freeSymbolName(taken, "class", nextClass));
    ClassOp::create(b, ops[exemplar[c]].getLoc(), classNames.back(),
                    ops[exemplar[c]].getSymName(), cls.pattern);
  }
  for (const PlanGroup &g : model.groups) {
    SmallVector<Attribute> members;
    SmallVector<Location> locs;
    for (int64_t t : g.members) {
      members.push_back(FlatSymbolRefAttr::get(ctx, ops[t].getSymName()));
      locs.push_back(ops[t].getLoc());
    }
    RedistributeOp first = ops[g.members.front()];
    GroupOp::create(
        b, FusedLoc::get(ctx, locs), freeSymbolName(taken, "group", nextGroup),
        classNames[g.cls], first.getSrcMesh(), first.getDstMesh(),
        b.getArrayAttr(members), /*routing=*/nullptr, ArrayRef<int64_t>{});
  }
  return success();
}
