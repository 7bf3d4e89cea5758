//===- Compile.cpp - The stages of reshard-compile ------------------------===//
#include "reshard/Compile/Compile.h"

#include "reshard/Conversion/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"
#include "reshard/Target/LayoutJSON/ImportLayoutJSON.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace reshard;

void reshard::registerCompileDialects(DialectRegistry &registry) {
  registry.insert<ReshardDialect, rt::RuntimeDialect>();
}

OwningOpRef<ModuleOp>
reshard::loadInput(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                   MLIRContext *context) {
  // Both the importer and the MLIR parser verify what they return.
  return parseLayoutOrMLIR(sourceMgr, context);
}

FailureOr<Stage> reshard::getStage(ModuleOp module) {
  size_t redistributions = 0, tables = 0, plans = 0, groups = 0, unrouted = 0,
         schedules = 0;
  for (Operation &op : module.getBody()->getOperations()) {
    redistributions += isa<RedistributeOp>(op);
    tables += isa<PiecesOp>(op);
    plans += isa<rt::PlanOp>(op);
    groups += isa<GroupOp, ClassOp, ScheduleOp>(op);
    if (auto group = dyn_cast<GroupOp>(op))
      unrouted += !group.getRouting();
    schedules += isa<ScheduleOp>(op);
  }
  if (plans) {
    if (plans > 1 || redistributions || tables || groups)
      return module.emitError()
             << "the module holds " << plans << " reshard_rt.plan(s) and "
             << redistributions
             << " reshard.redistribute op(s); a lowered module holds one "
                "plan and nothing else";
    return Stage::Lowered;
  }
  if (tables && groups)
    return module.emitError()
           << "the module holds both reshard.pieces (the explicit form) and "
              "classes or groups (the planned form); reshard-expand replaces "
              "the one by the other";
  if (groups)
    return schedules  ? Stage::Planned
           : unrouted ? Stage::Intersected
                      : Stage::Routed;
  if (!tables)
    return Stage::Layout;
  if (tables < redistributions) {
    llvm::StringSet<> planned;
    for (PiecesOp op : module.getOps<PiecesOp>())
      planned.insert(op.getTensor());
    for (RedistributeOp op : module.getOps<RedistributeOp>())
      if (!planned.contains(op.getSymName()))
        return op.emitError()
               << "has no reshard.pieces table, but " << tables << " of the "
               << "module's " << redistributions
               << " redistributions have one; the explicit form lists every "
                  "tensor's pieces";
  }
  return Stage::Explicit;
}

static LogicalResult runPasses(PassManager &pm, ModuleOp module,
                               PassManagerSetup setup) {
  if (setup && failed(setup(pm)))
    return failure();
  return pm.run(module);
}

LogicalResult reshard::planModule(ModuleOp module,
                                  const ReshardPlanOptions &options,
                                  Stage stage, PassManagerSetup setup) {
  if (stage == Stage::Planned)
    return success();
  assert((stage == Stage::Layout || stage == Stage::Intersected ||
          stage == Stage::Routed) &&
         "only a layout or a module on its way through the pipeline");
  PassManager pm(module.getContext());
  ReshardPlanOptions planning;
  planning.stagingBudget = options.stagingBudget;
  planning.maxOpsPerStep = options.maxOpsPerStep;
  planning.strategy = options.strategy;
  planning.transits = options.transits;
  planning.receivesAhead = options.receivesAhead;
  planning.relayTree = options.relayTree;
  planning.relayTreeMaxStreams = options.relayTreeMaxStreams;
  planning.lower = false;
  buildReshardPlanPipeline(pm, planning,
                           stage == Stage::Layout        ? PlanFrom::Layout
                           : stage == Stage::Intersected ? PlanFrom::Intersected
                                                         : PlanFrom::Routed);
  return runPasses(pm, module, setup);
}

FailureOr<std::future<FailureOr<std::string>>>
reshard::startReport(ModuleOp module) {
  ReshardReportOptions json;
  FailureOr<std::function<FailureOr<std::string>()>> work = prepareReport(
      module, "reshard-compile", ReportFormat::Json, json.perRank);
  if (failed(work))
    return failure();
  std::launch how = module.getContext()->isMultithreadingEnabled()
                        ? std::launch::async
                        : std::launch::deferred;
  return std::async(how, std::move(*work));
}

LogicalResult reshard::lowerModule(ModuleOp module, StringRef planName,
                                   PassManagerSetup setup) {
  PassManager pm(module.getContext());
  ConvertReshardToRuntimeOptions lowering;
  lowering.planName = planName.str();
  pm.addPass(createConvertReshardToRuntime(lowering));
  return runPasses(pm, module, setup);
}

LogicalResult reshard::emitCpp(ModuleOp module, CppBackend backend, bool header,
                               llvm::raw_ostream &os) {
  auto plans = module.getOps<rt::PlanOp>();
  if (plans.empty() || std::next(plans.begin()) != plans.end())
    return module.emitError("C++ is emitted from a module holding exactly "
                            "one reshard_rt.plan");
  return translatePlanToCpp(*plans.begin(), backend, header, os);
}
