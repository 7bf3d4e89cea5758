//===- CostModel.h - Bytes per link, bounds, estimated time -----*- C++ -*-===//
//
// The latency-bandwidth model of docs/CostModel.md, applied to a plan and to
// the two baselines built from the same pieces, so that figures come side
// by side from one run.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_COSTMODEL_H
#define RESHARD_PLAN_COSTMODEL_H

#include "reshard/Plan/PlanModel.h"
#include "reshard/Plan/Scheduling.h"
#include "reshard/Plan/Transfers.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <memory>

namespace reshard {

enum LinkClass { kLocal = 0, kNVLink = 1, kNetwork = 2, kNumLinkClasses = 3 };

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

/// One term of the physical lower bound: `bytes` that must pass `gpus`
/// NICs (or, for a GPU's receive term, its NIC and its NVLink), at `where`
/// (a domain, or a rank for the receive term; -1: the whole plan).
struct BoundTerm {
  int64_t bytes = 0;
  int64_t where = -1;
  int64_t gpus = 0;
  double seconds = 0;
};

/// The physical limits of a plan's pieces, whoever sends them and through
/// whichever GPU of a domain they enter or leave (docs/CostModel.md).
struct PlanBounds {
  /// Every element needed in a destination NVLink domain that no source
  /// rank of that domain holds, counted once per domain.
  int64_t networkBytes = 0;
  /// The busiest domain's ingress: what must enter it, over the NICs of
  /// every plan GPU in it.
  BoundTerm domainIngress;
  /// The busiest domain's egress: what only it holds and another domain
  /// needs, once, over the NICs of every plan GPU in it.
  BoundTerm domainEgress;
  /// The GPU that needs most bytes it does not hold, over its NIC and its
  /// NVLink together.
  BoundTerm gpuReceive;
  /// Every network byte over the NICs of every plan GPU.
  BoundTerm allNetwork;
  /// The largest of the three NIC terms, in bytes per NIC.
  int64_t perNicBytes = 0;
  double seconds = 0;
  /// The term that sets `seconds`.
  const char *binding = "none";
};

struct PlanReport {
  bool hasTopology = false;
  /// Whether relays forward in lanes (PlanModel::relayLanes), and how many
  /// consecutive holder ranks share one (PlanModel::relayLaneSpan).
  bool relayLanes = false;
  int64_t relayLaneSpan = 1;
  /// Holder streams through a third GPU (PlanModel::transits): how many
  /// enter the receiver's domain and how many leave the sender's through
  /// it, and the bytes they carry.
  struct Transits {
    int64_t entering = 0, leaving = 0, bytes = 0;
  } transits;
  /// Network crossings of a group piece into a domain that come from
  /// another domain's entries (a relay tree), and their bytes.
  int64_t fedCrossings = 0, fedBytes = 0;
  TopologySpec topology;
  /// Tensors, tensor classes, groups, and the pieces they stand for (one
  /// per tensor, destination rank and box).
  int64_t tensors = 0, classes = 0, groups = 0, pieces = 0;
  PlanFigures plan, direct, gatherBroadcast;
  PlanBounds bounds;
  /// Quantized destinations: per payload tensor, and summed.
  struct Quantized {
    std::string name;
    std::string quant; ///< as the dialect spells it: `block [128, 128] ue8m0`
    bool onReceiver = false;
    /// FP8 payload, scales, the values at the source's precision, and what
    /// one copy of the tensor moves: payload and scales when its senders
    /// quantize it, its full-precision values when its receivers do.
    int64_t payloadBytes = 0, scaleBytes = 0, fullPrecisionBytes = 0;
    int64_t movedBytes = 0;
    int64_t onReceivers = 0; ///< in the total: how many tensors
  };
  std::vector<Quantized> quantized;
  Quantized quantizedTotal;
  /// How each tensor class's pieces reach their destinations (each
  /// destination's copy once): a local copy, a holder of the domain over
  /// NVLink, a holder over the network (straight, or through a transit
  /// GPU), the domain's entry over NVLink (a relay), or another domain's
  /// entry over the network (a relay tree).
  enum Route {
    kByCopy,
    kByNVLink,
    kByNetwork,
    kByTransit,
    kByRelay,
    kByTree,
    kNumRoutes
  };
  struct ClassRoutes {
    int64_t tensors = 0;
    std::string example; ///< its first tensor
    int64_t bytes[kNumRoutes] = {};
    /// How the class crosses the network, from its bytes by route:
    /// "relay tree" (some destination domains get it from another domain's
    /// entries), "direct" (every one from the holders), "nvlink" or "copy"
    /// (it never crosses), with " + transits" where holder streams pass a
    /// third GPU.
    std::string algorithm() const;
  };
  std::vector<ClassRoutes> classRoutes; ///< per class
};

/// The figures of one plan: its transfers, streams and schedule.
PlanFigures planFigures(const PlanModel &model,
                        const std::vector<TransferGroup> &transfers,
                        const std::vector<StreamContent> &streams,
                        const PlanSchedule &schedule);

/// Sums a plan's traffic into its figures with the model: steps in
/// sequence; a step lasts as long as its slowest rank-link (latency once,
/// plus bytes over bandwidth, for each of NIC out, NIC in, NVLink out,
/// NVLink in, local copies). Traffic is added as it is enumerated, so a
/// plan of millions of (step, stream) slices is never held in memory.
class FigureBuilder {
public:
  explicit FigureBuilder(const std::optional<TopologySpec> &topology);
  ~FigureBuilder();
  /// `bytes` from `from` to `to` (equal: a local copy) in `step`, counted
  /// as `messages` messages (the caller knows how its traffic is cut).
  void add(int64_t step, int64_t from, int64_t to, int64_t bytes,
           int64_t messages) {
    addSteps(step, step + 1, from, to, bytes, bytes, messages);
  }
  /// `perStep` bytes in each of steps [begin, end - 1) and `last` bytes in
  /// step end - 1 (a stream at its quota), `messages` messages in all.
  void addSteps(int64_t begin, int64_t end, int64_t from, int64_t to,
                int64_t perStep, int64_t last, int64_t messages);
  PlanFigures finish();

private:
  struct State;
  std::unique_ptr<State> state;
};

/// The report of a plan at any stage after intersection (unrouted groups
/// are reported as the direct plan, an unscheduled plan in its trivial
/// schedule), with its baselines.
PlanReport buildReport(const PlanModel &model);

/// The physical lower bound of the model's pieces (docs/CostModel.md),
/// whoever sends them: routing needs no schedule for it.
PlanBounds physicalBounds(const PlanModel &model);
/// The same, given the plan's transfers and streams (enumerateTransfers and
/// collectStreams of `model`) when the caller has them already.
PlanReport buildReport(const PlanModel &model,
                       const std::vector<TransferGroup> &transfers,
                       const std::vector<StreamContent> &streams);

enum class ReportFormat { Text, Json };

/// Writes the report as tables (Text) or as one JSON object.
void printReport(const PlanReport &report, ReportFormat format, bool perRank,
                 llvm::raw_ostream &os);

} // namespace reshard

#endif // RESHARD_PLAN_COSTMODEL_H
