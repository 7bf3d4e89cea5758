//===- CostModel.h - Bytes per link, bounds, estimated time -----*- C++ -*-===//
//
// The latency-bandwidth model of docs/CostModel.md, applied to a plan and to
// the two baselines built from the same pieces, so that figures come side
// by side from one run.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_COSTMODEL_H
#define RESHARD_PLAN_COSTMODEL_H

#include "reshard/Plan/PlannedTensor.h"

#include "llvm/Support/raw_ostream.h"

#include <map>

namespace reshard {

enum LinkClass { kLocal = 0, kNVLink = 1, kNetwork = 2, kNumLinkClasses = 3 };

/// One movement of bytes; from == to is a local copy.
struct Transfer {
  int64_t step, from, to, bytes;
};

struct RankFigures {
  int64_t bytesOut[kNumLinkClasses] = {0, 0, 0};
  int64_t bytesIn[kNumLinkClasses] = {0, 0, 0};
  int64_t messagesOut[kNumLinkClasses] = {0, 0, 0};
  int64_t messagesIn[kNumLinkClasses] = {0, 0, 0};
};

/// What one plan (or baseline) costs.
struct PlanFigures {
  std::map<int64_t, RankFigures> perRank;
  int64_t bytes[kNumLinkClasses] = {0, 0, 0};
  int64_t messages[kNumLinkClasses] = {0, 0, 0};
  int64_t busiestNicOutBytes = 0, busiestNicOutRank = -1;
  int64_t busiestNicInBytes = 0, busiestNicInRank = -1;
  int64_t steps = 0;
  double estimatedSeconds = 0;
};

/// The physical limits of a plan's pieces, whoever sends them.
struct PlanBounds {
  /// Every element needed in a destination NVLink domain that no source
  /// rank of that domain holds, counted once per domain.
  int64_t networkBytes = 0;
  /// The busiest domain's ingress (egress) lower bound spread evenly over
  /// its receiving (sending) ranks' NICs.
  int64_t perNicBytes = 0;
  double seconds = 0;
};

struct PlanReport {
  bool hasTopology = false;
  TopologySpec topology;
  int64_t tensors = 0, pieces = 0;
  PlanFigures plan, direct, gatherBroadcast;
  PlanBounds bounds;
};

/// Evaluates transfers with the model: steps in sequence; a step lasts as
/// long as its slowest rank-link (latency once, plus bytes over bandwidth,
/// for each of NIC out, NIC in, NVLink out, NVLink in, local copies).
PlanFigures evaluateTransfers(const std::vector<Transfer> &transfers,
                              const PlannedTensor &anyTensor);

/// The report of a routed (or merely intersected) plan and its baselines.
PlanReport buildReport(llvm::ArrayRef<PlannedTensor> tensors);

enum class ReportFormat { Text, Json };

/// Writes the report as tables (Text) or as one JSON object.
void printReport(const PlanReport &report, ReportFormat format, bool perRank,
                 llvm::raw_ostream &os);

} // namespace reshard

#endif // RESHARD_PLAN_COSTMODEL_H
