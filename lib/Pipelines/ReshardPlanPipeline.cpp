//===- ReshardPlanPipeline.cpp - The plan pipeline ------------------------===//
#include "reshard/Pipelines/ReshardPlanPipeline.h"

#include "reshard/Conversion/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/Passes.h"

#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace reshard;

void reshard::buildReshardPlanPipeline(OpPassManager &pm,
                                       const ReshardPlanOptions &options,
                                       PlanFrom from) {
  if (from == PlanFrom::Layout) {
    pm.addPass(createReshardQuantize());
    pm.addPass(createReshardIntersect());
  }
  if (from != PlanFrom::Routed) {
    ReshardSelectSourcesOptions select;
    select.strategy = options.strategy;
    select.relayTree = options.relayTree;
    select.relayTreeMaxStreams = options.relayTreeMaxStreams;
    pm.addPass(createReshardSelectSources(select));
  }
  ReshardScheduleOptions schedule;
  schedule.stagingBudget = options.stagingBudget;
  schedule.maxOpsPerStep = options.maxOpsPerStep;
  // A module routed direct gets no transits unless asked for: the pass
  // reads the groups' routing.
  schedule.transits = options.transits;
  schedule.receivesAhead = options.receivesAhead;
  pm.addPass(createReshardSchedule(schedule));
  if (!options.lower)
    return;
  ConvertReshardToRuntimeOptions lowering;
  lowering.planName = options.planName;
  pm.addPass(createConvertReshardToRuntime(lowering));
}

void reshard::registerReshardPlanPipeline() {
  PassPipelineRegistration<ReshardPlanOptions>(
      "reshard-plan-pipeline",
      "Plan every redistribution (intersect, select sources, schedule) and "
      "lower the module to a reshard_rt plan",
      [](OpPassManager &pm, const ReshardPlanOptions &options) {
        buildReshardPlanPipeline(pm, options);
      });
}
