//===- Transfers.h - Who sends which members of which piece -----*- C++ -*-===//
//
// A routed group's decisions, spelled out per sender and receiver: each
// transfer moves one class piece of an arithmetic progression of the
// group's members. Scheduling, the cost model, the lowering and the
// expansion into explicit pieces all start from this one enumeration, so
// they agree on what moves.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_PLAN_TRANSFERS_H
#define RESHARD_PLAN_TRANSFERS_H

#include "reshard/Plan/PlanModel.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <vector>

namespace reshard {

enum class TransferKind {
  Copy,   ///< inside one rank, source shard to destination shard
  Direct, ///< a holder's source shard to another rank (NVLink or network)
  Relay,  ///< a destination forwards what it received, from its own shard
          ///< (to its domain's other replicas, or, from a feeder domain's
          ///< entry, to another domain's entry)
};

/// Members memberStart + i * memberStride, i < memberCount, of group
/// `group` move piece `piece` from `sender` to `receiver`.
struct TransferGroup {
  int64_t group, piece;
  int64_t sender, receiver;
  TransferKind kind;
  int64_t memberStart, memberStride, memberCount;
  /// A relay's lane (PlanModel::relayLanes; else 0): the holder whose
  /// stream brought it these members, directly or through a feeder
  /// domain's entry (a relay between domains forwards holder r's members
  /// in lane r); a fed domain's entry forwards those within its domain in
  /// lane R + r, R the plan's rank count (in lane r if 1 + 2R reaches the
  /// transit phases). With a relay lane span s > 1, r is the first rank of
  /// the holder's block of s (PlanModel::laneOf).
  int64_t lane = 0;

  /// 0 for what holders send; for relays 1 + the lane, so that what a
  /// relay forwards of each incoming stream is a stream of its own, one
  /// step behind that stream at its pace (a relay stream starts after the
  /// relay has received what it forwards).
  int64_t phase() const { return kind == TransferKind::Relay ? 1 + lane : 0; }
  bool hasMember(int64_t k) const {
    return k >= memberStart && (k - memberStart) % memberStride == 0 &&
           (k - memberStart) / memberStride < memberCount;
  }
  /// Whether this and `o` (of the same group) move a member in common.
  bool sharesMembersWith(const TransferGroup &o) const;
  /// How many members this and `o` (of the same group) move in common:
  /// first, first + stride, ...
  int64_t commonMembers(const TransferGroup &o, int64_t &first,
                        int64_t &stride) const;
};

/// Every transfer of the plan, group by group, piece by piece, in
/// destination replica order (then network domains ascending).
std::vector<TransferGroup> enumerateTransfers(const PlanModel &model);

/// The same transfers, in the same order, handed to `sink` one at a time
/// (for those who only count or key them: no list of them all).
void forEachTransfer(const PlanModel &model,
                     llvm::function_ref<void(const TransferGroup &)> sink);

/// The members k in [0, count) with k = a (mod m) and k = b (mod n), as
/// start, stride and count (count 0 when there are none).
void solveMembers(int64_t count, int64_t a, int64_t m, int64_t b, int64_t n,
                  int64_t &start, int64_t &stride, int64_t &number);

} // namespace reshard

#endif // RESHARD_PLAN_TRANSFERS_H
