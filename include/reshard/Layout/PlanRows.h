//===- PlanRows.h - Route and stream rows of a compact plan -----*- C++ -*-===//
//
// The `reshard.group` op stores a group's routing decisions and the
// `reshard.schedule` op the plan's streams as flat rows of integers; this
// header owns both schemas, for the ops, the planner and the lowering.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_PLANROWS_H
#define RESHARD_LAYOUT_PLANROWS_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace reshard {

/// What a routing decision is about: the in-domain holder that sends piece
/// `piece` to one destination replica over NVLink, or the one network
/// crossing of piece `piece` into one NVLink domain.
enum class RouteKind : int64_t { NVLink = 0, Network = 1 };

/// One routing decision of a group, for the pieces where a choice exists.
/// `key` is the replica's destination mesh linear index (NVLink) or the
/// NVLink domain (Network). Member k of the group takes candidate
/// `(holderBase + k) mod n` of the n holders that qualify (those in the
/// replica's domain for NVLink, all of them for the network), and, for the
/// network, enters the domain at destination `(entryBase + k) mod m` of the
/// m replicas there that need it (ascending by rank), which forwards it to
/// the others over NVLink. With a `feeder` domain (>= 0; a network domain
/// of the same piece whose own decision has none), member k comes instead
/// from the feeder's entry of member k, which forwards it over the network
/// from its destination shard (a relay tree: the holders' domain sends the
/// piece once for both). A decision left out is 0, 0, -1.
/// Stored as rows of 6: piece, kind, key, holderBase, entryBase, feeder.
struct RouteRow {
  static constexpr unsigned kWidth = 6;
  int64_t piece;
  RouteKind kind;
  int64_t key;
  int64_t holderBase;
  int64_t entryBase;
  int64_t feeder = -1;

  bool sameDecision(const RouteRow &o) const {
    return piece == o.piece && kind == o.kind && key == o.key;
  }
  bool operator<(const RouteRow &o) const {
    if (piece != o.piece)
      return piece < o.piece;
    if (kind != o.kind)
      return kind < o.kind;
    return key < o.key;
  }
  static std::vector<RouteRow> fromRows(llvm::ArrayRef<int64_t> rows);
  static std::vector<int64_t> toRows(llvm::ArrayRef<RouteRow> routes);
};

/// One ordered stream of bytes from `sender` to `receiver`: phase 0 carries
/// what holders send from their source shards, phases 1 + r what a relay
/// forwards from its own destination shards, and the transit phases
/// (below) a holder's stream that passes through a third GPU. It runs from
/// step `start`, `quota` bytes a step, until its bytes are sent.
/// Stored as rows of 5: sender, receiver, phase, start, quota.
struct PlanStream {
  static constexpr unsigned kWidth = 5;
  int64_t sender, receiver, phase, start, quota;

  bool operator<(const PlanStream &o) const {
    if (sender != o.sender)
      return sender < o.sender;
    if (receiver != o.receiver)
      return receiver < o.receiver;
    return phase < o.phase;
  }
  static std::vector<PlanStream> fromRows(llvm::ArrayRef<int64_t> rows);
  static std::vector<int64_t> toRows(llvm::ArrayRef<PlanStream> streams);
};

/// A holder's stream to a rank of another NVLink domain that passes through
/// `via`, a GPU of the sender's domain (it leaves through via's NIC) or of
/// the receiver's (it enters through via's NIC). The stream (sender,
/// receiver, 0) becomes two with the same transfers: sender -> via in phase
/// kTransitInPhase + receiver, packed from source shards, and via ->
/// receiver in phase kTransitOutPhase + sender, one step later at the same
/// quota, whose bytes via forwards unchanged from its workspace.
/// Stored as rows of 3: sender, receiver, via.
struct PlanTransit {
  static constexpr unsigned kWidth = 3;
  int64_t sender, receiver, via;

  bool operator<(const PlanTransit &o) const {
    if (sender != o.sender)
      return sender < o.sender;
    return receiver < o.receiver;
  }
  static std::vector<PlanTransit> fromRows(llvm::ArrayRef<int64_t> rows);
  static std::vector<int64_t> toRows(llvm::ArrayRef<PlanTransit> transits);
};

/// The phases of transit streams: past every relay phase 1 + r (ranks are
/// C ints; a fed lane R + r, R the rank count, is used only while
/// 1 + 2R stays below kTransitInPhase). The engine (PlanTables.h) states the
/// same values.
constexpr int64_t kTransitInPhase = int64_t(1) << 31;
constexpr int64_t kTransitOutPhase = int64_t(1) << 32;
inline bool isTransitIn(int64_t phase) {
  return phase >= kTransitInPhase && phase < kTransitOutPhase;
}
inline bool isTransitOut(int64_t phase) { return phase >= kTransitOutPhase; }
/// Relay phases 1 + r.
inline bool isRelay(int64_t phase) {
  return phase > 0 && phase < kTransitInPhase;
}
/// Streams packed from the sender's source shards.
inline bool packsSource(int64_t phase) {
  return phase == 0 || isTransitIn(phase);
}
/// Streams whose receiver unpacks into its destination shards (not a
/// transit's incoming stream, which it keeps to forward).
inline bool deliversToReceiver(int64_t phase) { return !isTransitIn(phase); }
/// Streams that bring their receiver what a holder sent (phase 0, or a
/// transit forwarding it): what relays wait for.
inline bool bringsHolderBytes(int64_t phase) {
  return phase == 0 || isTransitOut(phase);
}

/// Steps a stream of `bytes` at `quota` bytes a step takes (0 for none).
inline int64_t streamSteps(int64_t bytes, int64_t quota) {
  return bytes <= 0 ? 0 : bytes / quota + (bytes % quota != 0);
}

} // namespace reshard

#endif // RESHARD_LAYOUT_PLANROWS_H
