//===- ReshardPlanPipeline.h - The plan pipeline ----------------*- C++ -*-===//
//
// The one statement of the pass sequence that turns a layout into a plan:
// every tool, the CMake rule, the Python front end and the benchmarks build
// it from here (or name it: `--reshard-plan-pipeline`).
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PIPELINES_RESHARDPLANPIPELINE_H
#define RESHARD_PIPELINES_RESHARDPLANPIPELINE_H

#include "reshard/Layout/Layout.h"
#include "reshard/Plan/SourceSelection.h"
#include "reshard/Plan/Transits.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace reshard {

struct ReshardPlanOptions
    : public mlir::PassPipelineOptions<ReshardPlanOptions> {
  PassOptions::Option<int64_t> stagingBudget{
      *this, "staging-budget",
      llvm::cl::desc("Staging bytes a rank holds at any instant (a step's "
                     "sends and receives, what a transit keeps, the next "
                     "step's receives with receives-ahead); default 1 GiB"),
      llvm::cl::init(kDefaultStagingBudget)};
  PassOptions::Option<int64_t> maxOpsPerStep{
      *this, "max-ops-per-step",
      llvm::cl::desc("Point-to-point operations per rank and step (one NCCL "
                     "group); default 1024"),
      llvm::cl::init(1024)};
  PassOptions::Option<SourceStrategy> strategy{
      *this, "strategy", llvm::cl::desc("How senders are chosen"),
      llvm::cl::init(SourceStrategy::Balanced), sourceStrategyValues()};
  PassOptions::Option<RelayTree> relayTree{
      *this, "relay-tree",
      llvm::cl::desc("Whether a domain may get a piece from another "
                     "domain's entries (a relay tree)"),
      llvm::cl::init(RelayTree::Auto), relayTreeValues()};
  PassOptions::Option<int64_t> relayTreeMaxStreams{
      *this, "relay-tree-max-streams",
      llvm::cl::desc("With relay-tree=auto, the most streams a plan with a "
                     "relay tree may have (default 270000)"),
      llvm::cl::init(kRelayTreeMaxStreams)};
  PassOptions::Option<TransitMode> transits{
      *this, "transits",
      llvm::cl::desc("Holder streams through another GPU of a domain"),
      llvm::cl::init(TransitMode::Auto), transitModeValues()};
  PassOptions::Option<bool> receivesAhead{
      *this, "receives-ahead",
      llvm::cl::desc("The MPI backend posts each step's next receives while "
                     "the step is in flight; the budget counts them (more "
                     "steps at one budget); default false"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> planName{
      *this, "plan-name",
      llvm::cl::desc("Name of the plan (a C identifier: the C functions are "
                     "<name>_run etc.); default: the module's name, else "
                     "reshard_plan"),
      llvm::cl::init("")};
  PassOptions::Option<bool> lower{
      *this, "lower",
      llvm::cl::desc("End with convert-reshard-to-runtime (default); false "
                     "stops at the planned reshard module, for the report "
                     "and reshard-run --check"),
      llvm::cl::init(true)};
};

/// Where a module enters the pipeline: a layout (reshard-quantize first),
/// a module intersected but not routed, or one routed but not scheduled.
enum class PlanFrom { Layout, Intersected, Routed };

/// reshard-quantize, reshard-intersect, reshard-select-sources,
/// reshard-schedule and, unless `lower` is false,
/// convert-reshard-to-runtime, on the module; from `from` on.
void buildReshardPlanPipeline(mlir::OpPassManager &pm,
                              const ReshardPlanOptions &options,
                              PlanFrom from = PlanFrom::Layout);

/// Registers `--reshard-plan-pipeline`.
void registerReshardPlanPipeline();

} // namespace reshard

#endif // RESHARD_PIPELINES_RESHARDPLANPIPELINE_H
