//===- PlanModel.h - A whole plan as tensor classes and groups --*- C++ -*-===//
//
// The planner's representation: tensors of one class (shape, element type,
// both shardings, both mesh shapes) share one pattern of pieces in mesh
// coordinates, and tensors of one class that also move between the same two
// meshes form a group, which is routed and scheduled as a whole. Nothing
// here grows with the pieces: a MoE model's tens of thousands of expert
// tensors are a few classes and a few hundred groups.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_PLANMODEL_H
#define RESHARD_PLAN_PLANMODEL_H

#include "reshard/Layout/ClassPattern.h"
#include "reshard/Layout/PlanRows.h"
#include "reshard/Layout/TensorLayout.h"

#include <optional>
#include <string>
#include <vector>

namespace reshard {

/// How a group's senders are chosen.
enum class GroupRouting {
  /// Not routed yet: a local copy where the destination holds the piece,
  /// else the lowest holder (as Direct).
  Unrouted,
  /// Local, then NVLink, then one network crossing per NVLink domain, by
  /// the group's route rows.
  Balanced,
  /// The baseline: a local copy or the lowest holder, no relay.
  Direct,
};

/// The tensors of one class.
struct PlanClass {
  /// The layout of the class's first tensor: the shape, element size,
  /// shardings and mesh shapes are the class's; its ranks are one
  /// instance's.
  TensorLayout exemplar;
  ClassPattern pattern;
};

/// The tensors of one class that move between the same two meshes.
struct PlanGroup {
  int64_t cls = 0;
  MeshSpec srcMesh, dstMesh;
  /// Plan tensor indices, ascending; member k is members[k].
  std::vector<int64_t> members;
  GroupRouting routing = GroupRouting::Unrouted;
  /// Sorted by (piece, kind, key), one row per decision at most.
  std::vector<RouteRow> routes;

  int64_t numMembers() const { return members.size(); }
  /// The decision for (piece, kind, key), or the default one.
  RouteRow route(int64_t piece, RouteKind kind, int64_t key) const;
};

/// The steps of a plan: every stream's start and quota, within a staging
/// budget and a bound on operations per rank and step.
struct PlanSchedule {
  int64_t stagingBudget = kDefaultStagingBudget;
  int64_t maxOpsPerStep = 1024;
  /// Sorted by (sender, receiver, phase).
  std::vector<PlanStream> streams;
  /// Each step's next receives are posted while the step is in flight (by
  /// the MPI backend), so the budget counts them too.
  bool receivesAhead = false;

  const PlanStream *find(int64_t sender, int64_t receiver, int64_t phase) const;
};

/// What a tensor is to a quantized destination (reshard-quantize): the FP8
/// payload quantized on its sender, or the scales of one.
struct TensorQuant {
  enum Role : int8_t { None, Payload, Scales };
  Role role = None;
  /// Payload: the bytes of its values at the source's precision.
  int64_t fullPrecisionBytes = 0;
  /// Payload: the tensor of its scales; Scales: its payload.
  int64_t partner = -1;
  /// Quantized by its receivers after a full-precision transfer (else by
  /// its senders); the same on both records.
  bool onReceiver = false;
};

struct PlanModel {
  std::vector<std::string> tensorNames; ///< plan (input) order
  /// Per tensor; empty when no destination is quantized.
  std::vector<TensorQuant> tensorQuant;
  std::vector<int64_t> tensorGroup; ///< the group of each tensor
  std::vector<PlanClass> classes;
  std::vector<PlanGroup> groups;
  /// Rank r is in NVLink domain r / nvlDomainSize; without a topology every
  /// rank is a domain of its own.
  std::optional<TopologySpec> topology;
  std::optional<PlanSchedule> schedule;
  /// Whether a relay forwards what each holder sent it in a stream of its
  /// own (a lane, phase 1 + the holder's rank; a fed domain's entry, what
  /// a feeder entry forwarded of it, in 1 + R + that rank), one step
  /// behind that holder's stream, rather than all of it in one stream per
  /// receiver: reshard-schedule decides by the cost model, and takes them
  /// whenever they fit for a relay tree (the `relay_lanes` of the
  /// schedule).
  bool relayLanes = false;
  /// With lanes, holders whose ranks r share r / relayLaneSpan share a lane
  /// (numbered by the block's first rank): 1 for a lane per holder;
  /// reshard-select-sources widens it to a domain or two where per-holder
  /// lanes would make the plan too large (the module's
  /// `reshard.relay_lane_span`).
  int64_t relayLaneSpan = 1;
  /// Holder streams that pass through a third GPU, sorted by (sender,
  /// receiver): reshard-schedule picks them to balance NICs (the
  /// `transits` of the schedule).
  std::vector<PlanTransit> transits;

  /// The lane of what holder `holder` sent (PlanModel::relayLaneSpan).
  int64_t laneOf(int64_t holder) const {
    return holder - holder % relayLaneSpan;
  }
  int64_t domainOf(int64_t rank) const {
    return topology ? rank / topology->nvlDomainSize : rank;
  }
  size_t numTensors() const { return tensorNames.size(); }
  /// The layout of tensor `tensor`: its class's, on its group's meshes.
  TensorLayout layoutOf(int64_t tensor) const;
  /// The member index of `tensor` in its group.
  int64_t memberOf(int64_t tensor) const;
  /// Bytes of one member's piece `piece` of group `group`.
  int64_t pieceBytes(int64_t group, int64_t piece) const;
  /// The GPU the holder stream (sender, receiver) passes through, or -1.
  int64_t transitVia(int64_t sender, int64_t receiver) const;
  /// The plan's GPUs: the ranks of every mesh, ascending, once each.
  std::vector<int64_t> planRanks() const;
  /// Largest global rank + 1 over every mesh (at least 1).
  int64_t numRanks() const;
  /// Whether some route is fed by another domain's entries (a relay tree).
  bool hasRelayTree() const;
};

/// Builds the classes and groups of `layouts` (plan order): a tensor joins
/// the first class it shares shape, element size, shardings and mesh
/// shapes with, and the group of that class on the same two meshes (equal
/// rank lists). Patterns are computed once per class.
PlanModel buildPlanModel(std::vector<TensorLayout> layouts,
                         std::optional<TopologySpec> topology);

/// The facts of one group piece that routing works from: who holds it and
/// how each destination replica can get it.
struct PieceDeliveries {
  enum class Kind { Local, NVLink, Network };
  struct Replica {
    int64_t linear; ///< destination mesh linear index
    int64_t rank;
    Kind kind;
    /// NVLink: the holders in the replica's domain, ascending.
    llvm::SmallVector<int64_t, 4> domainHolders;
  };
  struct Domain {
    int64_t domain;
    /// The replicas there (none of them local or NVLink), ascending by rank.
    llvm::SmallVector<int64_t, 4> ranks;
  };
  /// The source ranks that hold the piece, ascending.
  llvm::SmallVector<int64_t, 4> holders;
  /// In replica order (row-major over the unused destination axes).
  llvm::SmallVector<Replica, 4> replicas;
  /// Ascending by domain.
  llvm::SmallVector<Domain, 4> networkDomains;
};

PieceDeliveries deliveriesOf(const PlanModel &model, int64_t group,
                             int64_t piece);

} // namespace reshard

#endif // RESHARD_PLAN_PLANMODEL_H
