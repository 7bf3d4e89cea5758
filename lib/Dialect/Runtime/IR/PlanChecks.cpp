//===- PlanChecks.cpp - What a compact plan must prove --------------------===//
//
// Every check runs on the engine tables, never on pieces of tensors: a
// group piece's deliveries to one destination are a few arithmetic
// progressions of members, and exactly-once is that they partition the
// group's members (pairwise disjoint and as many as the members).
//
//===----------------------------------------------------------------------===//
#include "reshard/Dialect/Runtime/IR/PlanEncoding.h"
#include "reshard/Layout/Layout.h"
#include "reshard/Layout/RelayTiming.h"

#include "mlir/IR/Threading.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

using namespace mlir;
using namespace reshard;
using namespace reshard::rt;

namespace {

/// Members start + i * stride, i < count.
struct Progression {
  int64_t start, stride, count;
  int64_t last() const { return start + (count - 1) * stride; }
};

int64_t gcd(int64_t a, int64_t b) {
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/// The smallest member of both, or -1.
int64_t firstCommon(const Progression &a, const Progression &b) {
  // x = a.start (mod m), x = b.start (mod n), by the extended Euclid
  // algorithm in 128 bits (m, n < 2^31, so lcm < 2^62).
  int64_t m = a.count > 1 ? a.stride : 1, n = b.count > 1 ? b.stride : 1;
  int64_t g = gcd(m, n);
  if ((b.start - a.start) % g != 0)
    return -1;
  __int128 oldR = m, r = n, oldS = 1, s = 0;
  while (r != 0) {
    __int128 q = oldR / r, t = r;
    r = oldR - q * r;
    oldR = t;
    t = s;
    s = oldS - q * s;
    oldS = t;
  }
  __int128 lcm = static_cast<__int128>(m) / g * n;
  __int128 x = a.start + static_cast<__int128>(m) *
                             (((b.start - a.start) / g * oldS) % (n / g));
  __int128 lo = std::max(a.start, b.start);
  x = ((x - lo) % lcm + lcm) % lcm + lo;
  return x <= std::min(a.last(), b.last()) ? static_cast<int64_t>(x) : -1;
}

/// How many members both have.
int64_t commonCount(const Progression &a, const Progression &b) {
  int64_t x = firstCommon(a, b);
  if (x < 0)
    return 0;
  int64_t m = a.count > 1 ? a.stride : 1, n = b.count > 1 ? b.stride : 1;
  __int128 lcm = static_cast<__int128>(m) / gcd(m, n) * n;
  return static_cast<int64_t>((std::min(a.last(), b.last()) - x) / lcm + 1);
}

/// Whether a relay stream `out` sends every byte of the members of `want`
/// (at byte `outAt` of it) that `had` brought (at byte `inAt` of a phase-0
/// stream from step `inStart`, `inQuota` bytes a step) in a later step
/// than the byte arrives in, by RelayTiming.h's bound.
bool cutsThrough(const Progression &had, int64_t inStart, int64_t inQuota,
                 int64_t inAt, const Progression &want,
                 const engine::Stream &out, int64_t outAt, int64_t pieceBytes) {
  int64_t first = firstCommon(had, want), count = commonCount(had, want);
  if (first < 0 || inQuota <= 0)
    return false;
  int64_t m = had.count > 1 ? had.stride : 1,
          n = want.count > 1 ? want.stride : 1;
  SharedMembers shared =
      sharedMembers(first, m / gcd(m, n) * n, count, pieceBytes, inStart,
                    inQuota, {inAt, had.start, had.count > 1 ? had.stride : 0},
                    {outAt, want.start, want.count > 1 ? want.stride : 0});
  return leastCutThroughStart(shared, out.quota) <= out.start;
}

/// One progression of members of one group piece reaching one destination
/// (mesh linear index), from item `item` (or a copy item).
struct Delivery {
  int64_t group, piece, linear;
  Progression members;
  int64_t item;
  int64_t rank;
  bool operator<(const Delivery &o) const {
    return std::tie(group, piece, linear, members.start) <
           std::tie(o.group, o.piece, o.linear, o.members.start);
  }
};

/// A failed check: its diagnostic, or none in the quiet (parallel) pass.
class CheckFailure {
public:
  CheckFailure() = default;
  explicit CheckFailure(InFlightDiagnostic diag) : diag(std::move(diag)) {}
  template <typename T> CheckFailure &operator<<(T &&value) {
    if (diag)
      *diag << std::forward<T>(value);
    return *this;
  }
  operator LogicalResult() const { return failure(); }

private:
  std::optional<InFlightDiagnostic> diag;
};

class Checker {
public:
  explicit Checker(const EncodedPlan &e) : e(e), p(e.view()) {}
  LogicalResult run();

private:
  CheckFailure atItem(int64_t item, bool quiet = false) {
    if (quiet)
      return CheckFailure();
    CheckFailure f(e.itemsOpOf(item).emitOpError());
    f << "item " << item - e.listFirst[listOf(item)] << " ";
    return f;
  }
  CheckFailure errorAt(Operation *op, bool quiet) {
    return quiet ? CheckFailure() : CheckFailure(op->emitOpError());
  }
  int64_t listOf(int64_t item) const {
    return std::upper_bound(e.listFirst.begin(), e.listFirst.end(), item) -
           e.listFirst.begin() - 1;
  }
  std::string tensorName(int64_t group, int64_t member) const {
    return e.tensorNames[engine::member_tensor(p, p.groups[group], member)];
  }
  /// The linear index of `rank` in mesh `mesh`, or -1.
  int64_t linearOf(int64_t mesh, int64_t rank) const {
    auto it = linear.find({mesh, rank});
    return it == linear.end() ? -1 : it->second;
  }
  /// Records that item `item` reaches destination linear index `l`, rank
  /// `rank`, for the exactly-once check.
  void deliver(int64_t item, int64_t l, int64_t rank) {
    const engine::Item &it = p.items[item];
    deliveries.push_back(
        {it.group, it.piece, l, {it.start, it.stride, it.count}, item, rank});
  }
  const engine::Piece &pieceOf(const engine::Item &it) const {
    return p.pieces[p.classes[p.groups[it.group].cls].first_piece + it.piece];
  }
  int64_t combo(int64_t cls, bool src, int64_t l) const {
    const engine::Class &c = p.classes[cls];
    return p.words[(src ? c.src_combo_of : c.dst_combo_of) + l];
  }

  LogicalResult checkGroups();
  LogicalResult checkItems();
  LogicalResult checkStreams();
  LogicalResult checkTransit(int64_t stream);
  LogicalResult checkCopies();
  LogicalResult checkExactlyOnce(bool quiet);
  LogicalResult checkDeliveries();
  LogicalResult checkRelays(int64_t program, bool quiet);
  LogicalResult checkSteps(int64_t program, bool quiet);

  /// Whether `rank` holds item `it`'s piece in its source (`src`) or
  /// destination shard; also its linear index there.
  bool holds(int64_t rank, const engine::Item &it, bool src, int64_t &l) {
    const engine::Group &g = p.groups[it.group];
    l = linearOf(src ? g.src_mesh : g.dst_mesh, rank);
    const engine::Piece &piece = pieceOf(it);
    return l >= 0 &&
           combo(g.cls, src, l) == (src ? piece.src_combo : piece.dst_combo);
  }

  const EncodedPlan &e;
  const engine::Plan &p;
  llvm::DenseMap<std::pair<int64_t, int64_t>, int64_t> linear;
  std::vector<Delivery> deliveries;
};

} // namespace

LogicalResult Checker::checkGroups() {
  for (int64_t m = 0; m < p.num_meshes; ++m)
    for (int64_t i = 0; i < p.meshes[m].num_ranks; ++i)
      linear[{m, p.words[p.meshes[m].ranks + i]}] = i;
  for (int64_t gi = 0; gi < p.num_groups; ++gi) {
    const engine::Group &g = p.groups[gi];
    GroupOp op = e.groupOpOf(gi);
    if (g.cls < 0 || g.cls >= p.num_classes)
      return op.emitOpError()
             << "names class " << g.cls << " of " << p.num_classes;
    for (auto [mesh, src] :
         {std::pair{g.src_mesh, true}, {g.dst_mesh, false}}) {
      if (mesh < 0 || mesh >= p.num_meshes)
        return op.emitOpError()
               << "names mesh " << mesh << " of " << p.num_meshes;
      const engine::Class &c = p.classes[g.cls];
      int64_t devices = src ? c.src_devices : c.dst_devices;
      if (p.meshes[mesh].num_ranks != devices)
        return op.emitOpError()
               << "moves between meshes " << g.src_mesh << " and " << g.dst_mesh
               << ", but mesh " << mesh << " has " << p.meshes[mesh].num_ranks
               << " ranks where class " << g.cls << " has " << devices << " "
               << (src ? "source" : "destination") << " devices";
    }
  }
  // As planning does (kMaxPlanBytes): the shards of every tensor on both
  // sides bound what a rank stages, keeps and quantizes, so their sum must
  // leave every such count in 64 bits.
  // A class's shards on both sides, once per class (nullopt: 2^63 or more).
  std::vector<std::optional<int64_t>> classShards(p.num_classes, 0);
  for (int64_t ci = 0; ci < p.num_classes; ++ci) {
    const engine::Class &c = p.classes[ci];
    std::optional<int64_t> &sum = classShards[ci];
    for (auto [src, devices] :
         {std::pair{true, c.src_devices}, {false, c.dst_devices}})
      for (int64_t l = 0; l < devices && sum; ++l)
        sum = llvm::checkedAdd(
            *sum, p.words[(src ? c.src_shard_bytes : c.dst_shard_bytes) +
                          combo(ci, src, l)]);
  }
  std::optional<int64_t> shards = 0;
  for (int64_t gi = 0; gi < p.num_groups; ++gi) {
    const engine::Group &g = p.groups[gi];
    std::optional<int64_t> all = classShards[g.cls];
    all = all ? llvm::checkedMul(*all, g.num_members) : all;
    shards = all ? llvm::checkedAdd(*shards, *all) : all;
    if (!shards || *shards >= kMaxPlanBytes)
      return e.groupOpOf(gi).emitOpError()
             << "brings the plan's shards (every tensor's, on both sides) to "
                "2^60 bytes or more; every byte count of a plan must fit 64 "
                "bits";
  }
  for (int t = 0; t < p.num_tensors; ++t)
    if (p.tensor_group[t] < 0)
      return e.getPlanOp().emitOpError()
             << "tensor " << t << " ('" << e.tensorNames[t]
             << "') is in no reshard_rt.group";
  return success();
}

LogicalResult Checker::checkItems() {
  for (int64_t i = 0; i < p.num_items; ++i) {
    const engine::Item &it = p.items[i];
    if (it.group >= p.num_groups)
      return atItem(i) << "names group " << it.group << " of " << p.num_groups;
    const engine::Group &g = p.groups[it.group];
    if (it.piece >= p.classes[g.cls].num_pieces)
      return atItem(i) << "names piece " << it.piece << " of class " << g.cls
                       << ", which has " << p.classes[g.cls].num_pieces;
    int64_t last = it.start + (it.count - 1) * int64_t(it.stride);
    if (last >= g.num_members)
      return atItem(i) << "reaches member " << last << " of group " << it.group
                       << ", which has " << g.num_members;
  }
  return success();
}

LogicalResult Checker::checkStreams() {
  // What every stream carries, below 2^62: a byte may take several hops
  // (a transit, a relay, a relay tree's feeder) past the 2^60 planning
  // allows for the shards, and a rank's sends and receives of a step then
  // still add up in 64 bits.
  int64_t total = 0;
  for (int64_t si = 0; si < p.num_streams; ++si) {
    const engine::Stream s = engine::stream_at(p, si);
    SendOp op = e.sendOpOf(si);
    std::optional<int64_t> sum = llvm::checkedAdd(total, s.bytes);
    if (!sum || *sum >= kMaxStreamBytes)
      return op.emitOpError() << "brings the plan's streams to 2^62 bytes or "
                                 "more; every byte count of a plan must fit "
                                 "64 bits";
    total = *sum;
    if (s.sender == s.receiver)
      return op.emitOpError() << "sends to its own rank; a rank copies "
                                 "locally with reshard_rt.copy";
    if (failed(checkTransit(si)))
      return failure();
    std::optional<int64_t> bytes = 0;
    bool fromSource = engine::packs_source(s);
    for (int64_t i = s.first_item; i < s.first_item + s.num_items; ++i) {
      const engine::Item &it = p.items[i];
      int64_t l;
      // A transit forwards what it keeps; checkTransit matched the items.
      if (!engine::transit_out(s) && !holds(s.sender, it, fromSource, l))
        return atItem(i) << "is sent by rank " << s.sender << " from its "
                         << (fromSource ? "source" : "destination")
                         << " shards, but rank " << s.sender << " does not "
                         << "hold piece " << it.piece << " of group "
                         << it.group << " there";
      int64_t receiver = engine::transit_in(s) ? s.phase - engine::kTransitIn
                                               : int64_t(s.receiver);
      if (!holds(receiver, it, false, l))
        return atItem(i) << "is received by rank " << receiver
                         << ", which does not need piece " << it.piece
                         << " of group " << it.group;
      if (!engine::transit_in(s))
        deliver(i, l, s.receiver);
      std::optional<int64_t> b =
          llvm::checkedMul(pieceOf(it).bytes, int64_t(it.count));
      if (!b || !(bytes = llvm::checkedAdd(*bytes, *b)))
        return op.emitOpError() << "carries more than 2^63 bytes";
    }
    if (*bytes != s.bytes)
      return op.emitOpError() << "states " << s.bytes << " bytes, but its "
                              << "items are " << *bytes << " bytes";
  }
  return success();
}

/// The stream with this key, if any (streams are sorted by key).
static std::optional<engine::Stream> findStream(const engine::Plan &p,
                                                int64_t sender,
                                                int64_t receiver,
                                                int64_t phase) {
  auto key = std::make_tuple(sender, receiver, phase);
  auto keyOf = [&](int64_t i) {
    engine::Stream s = engine::stream_at(p, i);
    return std::make_tuple(int64_t(s.sender), int64_t(s.receiver), s.phase);
  };
  auto indices = llvm::seq<int64_t>(0, p.num_streams);
  int64_t at = llvm::partition_point(
                   indices, [&](int64_t i) { return keyOf(i) < key; }) -
               indices.begin();
  if (at < p.num_streams && keyOf(at) == key)
    return engine::stream_at(p, at);
  return std::nullopt;
}

LogicalResult Checker::checkTransit(int64_t si) {
  const engine::Stream s = engine::stream_at(p, si);
  if (!engine::transit_in(s) && !engine::transit_out(s))
    return success();
  SendOp op = e.sendOpOf(si);
  // The stream into the transit and the one out of it, each naming the
  // other's far end.
  bool in = engine::transit_in(s);
  int64_t far = s.phase - (in ? engine::kTransitIn : engine::kTransitOut);
  std::optional<engine::Stream> other =
      in ? findStream(p, s.receiver, far, engine::kTransitOut + s.sender)
         : findStream(p, far, s.sender, engine::kTransitIn + s.receiver);
  if (far == s.sender || far == s.receiver)
    return op.emitOpError()
           << "passes through rank " << (in ? s.receiver : s.sender)
           << " on the way between ranks " << (in ? s.sender : far) << " and "
           << (in ? far : s.receiver) << "; a transit joins two other ranks";
  if (!other)
    return op.emitOpError()
           << (in ? "sends rank " : "forwards from rank ") << far << " "
           << (in ? "through" : "what passes") << " rank "
           << (in ? s.receiver : s.sender)
           << (in ? ", which forwards nothing to it"
                  : ", which sends it nothing in that transit phase")
           << "; a transit's two streams name each other's far end";
  const engine::Stream &into = in ? s : *other, &out = in ? *other : s;
  bool sameItems = into.num_items == out.num_items;
  for (int64_t i = 0; sameItems && i < into.num_items; ++i) {
    const engine::Item &a = p.items[into.first_item + i],
                       &b = p.items[out.first_item + i];
    sameItems = a.group == b.group && a.piece == b.piece &&
                a.start == b.start && a.stride == b.stride &&
                a.count == b.count;
  }
  if (!sameItems || into.bytes != out.bytes || into.quota != out.quota ||
      out.start != into.start + 1)
    return op.emitOpError()
           << "is one of a transit's two streams (rank " << into.sender
           << " to " << into.receiver << " to " << out.receiver
           << "), which need the same items, bytes and quota, the second "
              "starting one step after the first (start "
           << into.start << " and " << out.start << ", quota " << into.quota
           << " and " << out.quota << ", bytes " << into.bytes << " and "
           << out.bytes << ")";
  return success();
}

LogicalResult Checker::checkCopies() {
  for (int64_t pi = 0; pi < p.num_programs; ++pi) {
    const engine::RankProgram &prog = p.programs[pi];
    for (int64_t i = prog.first_copy; i < prog.first_copy + prog.num_copies;
         ++i) {
      const engine::Item &it = p.items[i];
      int64_t l;
      if (!holds(prog.rank, it, true, l))
        return atItem(i) << "is copied locally on rank " << prog.rank
                         << ", which does not hold piece " << it.piece
                         << " of group " << it.group << " in its source shards";
      if (!holds(prog.rank, it, false, l))
        return atItem(i) << "is copied locally on rank " << prog.rank
                         << ", which does not need piece " << it.piece
                         << " of group " << it.group;
      deliver(i, l, prog.rank);
    }
  }
  return success();
}

LogicalResult Checker::checkRelays(int64_t pi, bool quiet) {
  /// Members a rank has of a group piece, and the step the last byte of
  /// them arrives in (-1: copied locally, or no bytes).
  struct Had {
    Progression members;
    int64_t lastStep;
    /// The stream that brought them (quota 0: a local copy) and
    /// where the item sits in it.
    int64_t start = 0, quota = 0, at = 0;
  };
  auto itemBytes = [&](const engine::Item &it) {
    return it.count * pieceOf(it).bytes;
  };
  {
    const engine::RankProgram &prog = p.programs[pi];
    std::map<std::pair<int64_t, int64_t>, std::vector<Had>> has;
    for (int64_t i = prog.first_copy; i < prog.first_copy + prog.num_copies;
         ++i) {
      const engine::Item &it = p.items[i];
      has[{it.group, it.piece}].push_back(
          {{it.start, it.stride, it.count}, -1});
    }
    for (int64_t r = 0; r < prog.num_recvs; ++r) {
      // Whatever it receives into its destination shards (from a holder,
      // a transit, or a relay of another domain) it may forward.
      const engine::Stream s = engine::recv_stream(p, prog, r);
      if (engine::transit_in(s))
        continue;
      int64_t at = 0;
      for (int64_t i = s.first_item; i < s.first_item + s.num_items; ++i) {
        const engine::Item &it = p.items[i];
        int64_t bytes = itemBytes(it);
        has[{it.group, it.piece}].push_back(
            {{it.start, it.stride, it.count},
             bytes ? s.start + (at + bytes - 1) / s.quota : -1,
             s.start,
             s.quota,
             at});
        at += bytes;
      }
    }
    for (int64_t si = prog.first_send; si < prog.first_send + prog.num_sends;
         ++si) {
      const engine::Stream s = engine::stream_at(p, si);
      if (engine::packs_source(s) || engine::transit_out(s))
        continue; // not a relay
      int64_t at = 0;
      for (int64_t i = s.first_item; i < s.first_item + s.num_items; ++i) {
        const engine::Item &it = p.items[i];
        int64_t first = s.start + at / s.quota;
        at += itemBytes(it);
        Progression want{it.start, it.stride, it.count};
        // What the rank has of a group piece is disjoint (exactly-once is
        // checked first), so counting the common members proves coverage.
        int64_t covered = 0;
        auto found = has.find({it.group, it.piece});
        if (found != has.end())
          for (const Had &h : found->second) {
            int64_t common = commonCount(h.members, want);
            // The MPI backend runs local copies while the first step's
            // messages move: what a rank copied is never forwarded.
            if (common && h.quota == 0 && pieceOf(it).bytes > 0)
              return atItem(i, quiet)
                     << "is relayed by rank " << prog.rank
                     << ", which copies members of it locally; a relay "
                        "forwards only what it receives (local copies run "
                        "while the first step's messages move)";
            if (common && h.lastStep >= first &&
                !cutsThrough(h.members, h.start, h.quota, h.at, want, s,
                             at - itemBytes(it), pieceOf(it).bytes))
              return atItem(i, quiet)
                     << "is relayed by rank " << prog.rank << " from step "
                     << first << ", but the rank receives members of it "
                     << "until step " << h.lastStep
                     << "; a relay sends a byte only after it arrives (by "
                        "the bound in docs/Runtime.md)";
            covered += common;
          }
        if (covered != want.count)
          return atItem(i, quiet)
                 << "is relayed by rank " << prog.rank
                 << ", which does not receive all those members of "
                 << "piece " << it.piece << " of group " << it.group
                 << " in phase 0 or from a transit";
      }
    }
  }
  return success();
}

LogicalResult Checker::checkExactlyOnce(bool quiet) {
  std::sort(deliveries.begin(), deliveries.end());
  int64_t keys = 0;
  for (size_t a = 0; a < deliveries.size();) {
    size_t b = a;
    const Delivery &k = deliveries[a];
    while (b < deliveries.size() && deliveries[b].group == k.group &&
           deliveries[b].piece == k.piece && deliveries[b].linear == k.linear)
      ++b;
    ++keys;
    int64_t n = p.groups[k.group].num_members, total = 0;
    for (size_t i = a; i < b; ++i)
      total += deliveries[i].members.count;
    // Disjoint: pairwise for a few progressions, else by one bit a member.
    int64_t twice = -1;
    if (b - a <= 64) {
      for (size_t i = a; i < b && twice < 0; ++i)
        for (size_t j = i + 1; j < b && twice < 0; ++j)
          twice = firstCommon(deliveries[i].members, deliveries[j].members);
    } else {
      std::vector<bool> seen(n);
      for (size_t i = a; i < b && twice < 0; ++i)
        for (int64_t m = 0; m < deliveries[i].members.count && twice < 0; ++m) {
          int64_t member =
              deliveries[i].members.start + m * deliveries[i].members.stride;
          if (seen[member])
            twice = member;
          seen[member] = true;
        }
    }
    if (twice >= 0)
      return atItem(deliveries[a].item, quiet)
             << "(with others) delivers piece " << k.piece << " of tensor '"
             << tensorName(k.group, twice) << "' (group " << k.group
             << ", member " << twice << ") to rank " << k.rank
             << " twice; each element arrives exactly once";
    if (total != n) {
      std::vector<bool> seen(n);
      for (size_t i = a; i < b; ++i)
        for (int64_t m = 0; m < deliveries[i].members.count; ++m)
          seen[deliveries[i].members.start + m * deliveries[i].members.stride] =
              true;
      int64_t missing =
          std::find(seen.begin(), seen.end(), false) - seen.begin();
      return atItem(deliveries[a].item, quiet)
             << "(with others) delivers piece " << k.piece << " of group "
             << k.group << " to rank " << k.rank << ", but never for tensor '"
             << tensorName(k.group, missing) << "' (member " << missing
             << "); each element arrives exactly once";
    }
    a = b;
  }
  // Every key delivered is a valid one; as many as there are means all.
  int64_t expected = 0;
  for (int64_t gi = 0; gi < p.num_groups; ++gi) {
    const engine::Group &g = p.groups[gi];
    const engine::Class &c = p.classes[g.cls];
    std::vector<int64_t> perCombo(c.dst_combos, 0);
    for (int64_t i = 0; i < c.num_pieces; ++i)
      ++perCombo[p.pieces[c.first_piece + i].dst_combo];
    for (int64_t l = 0; l < c.dst_devices; ++l)
      expected += perCombo[combo(g.cls, false, l)];
  }
  if (keys == expected)
    return success();
  // Name one that is missing.
  std::set<std::tuple<int64_t, int64_t, int64_t>> got;
  for (const Delivery &d : deliveries)
    got.insert({d.group, d.piece, d.linear});
  for (int64_t gi = 0; gi < p.num_groups; ++gi) {
    const engine::Group &g = p.groups[gi];
    const engine::Class &c = p.classes[g.cls];
    for (int64_t l = 0; l < c.dst_devices; ++l)
      for (int64_t i = 0; i < c.num_pieces; ++i)
        if (p.pieces[c.first_piece + i].dst_combo == combo(g.cls, false, l) &&
            !got.count({gi, i, l}))
          return errorAt(e.groupOpOf(gi), quiet)
                 << "piece " << i << " of tensor '" << tensorName(gi, 0)
                 << "' (member 0) never reaches rank "
                 << p.words[p.meshes[g.dst_mesh].ranks + l]
                 << "; each element arrives exactly once";
  }
  return success();
}

LogicalResult Checker::checkSteps(int64_t pi, bool quiet) {
  {
    const engine::RankProgram &prog = p.programs[pi];
    int64_t most = 0, kept = engine::carry_bytes(p, prog);
    engine::StepLoads sends, recvs;
    engine::direction_loads(p, prog, true, prog.steps, sends);
    engine::direction_loads(p, prog, false, prog.steps, recvs);
    for (int64_t step = 0; step < prog.steps; ++step) {
      most = std::max(most, engine::step_staging(p, sends, recvs, step));
      int64_t bytes = sends.bytes[step] + recvs.bytes[step];
      int64_t early = p.receives_ahead ? recvs.bytes[step + 1] : 0;
      // While a step is in flight the next step's receives are posted, and
      // a transit keeps one step of what it forwards. Each term is below
      // 2^63 (the streams' limit); their sum may not be.
      std::optional<int64_t> held = llvm::checkedAdd(bytes, early);
      held = held ? llvm::checkedAdd(*held, kept) : held;
      if (p.staging_budget > 0 && (!held || *held > p.staging_budget))
        return errorAt(e.rankOpOf(pi), quiet)
               << "moves " << bytes << " bytes in step " << step
               << (early ? llvm::formatv(" while the next step's receives "
                                         "take {0}",
                                         early)
                               .str()
                         : std::string())
               << (kept ? llvm::formatv(" and keeps {0} to forward", kept).str()
                        : std::string())
               << ", over the staging budget of " << p.staging_budget;
      int64_t ops = sends.messages[step] + recvs.messages[step];
      if (p.max_ops_per_step > 0 && ops > p.max_ops_per_step)
        return errorAt(e.rankOpOf(pi), quiet)
               << "posts " << ops << " messages in step " << step
               << ", over max_ops_per_step " << p.max_ops_per_step;
    }
    // What a transit keeps, the quantized sources' scales, then shadows sit
    // after the staging (QuantAreas.h).
    int64_t carry = engine::carry_area_bytes(p, prog);
    int64_t quant = engine::quant_area_bytes(p, prog.rank);
    int64_t shadows = engine::shadow_area_bytes(p, prog.rank);
    std::optional<int64_t> need = llvm::checkedAdd(most, carry);
    need = need ? llvm::checkedAdd(*need, quant) : need;
    need = need ? llvm::checkedAdd(*need, shadows) : need;
    if (need != prog.workspace)
      return errorAt(e.rankOpOf(pi), quiet)
             << "states a workspace of " << prog.workspace
             << " bytes; its largest step stages " << most
             << (p.receives_ahead ? " with the next step's receives" : "")
             << (carry
                     ? llvm::formatv(", it keeps {0} as a transit", carry).str()
                     : std::string())
             << (quant ? llvm::formatv(
                             ", its quantized sources' scales take {0}", quant)
                             .str()
                       : std::string())
             << (shadows ? llvm::formatv(", the shadows of what it quantizes "
                                         "on receipt {0}",
                                         shadows)
                               .str()
                         : std::string());
  }
  return success();
}

/// Exactly-once and each program's relays and steps read the shared tables
/// only: they are checked quietly in parallel, and only when one fails
/// again in order (exactly-once, then relays, then steps), for the
/// diagnostic of the first that fails. The relay check's counting assumes
/// exactly-once, which the ordered pass checks first.
LogicalResult Checker::checkDeliveries() {
  int64_t n = p.num_programs;
  std::vector<char> ok(n + 1, 0);
  parallelFor(e.getPlanOp()->getContext(), 0, n + 1, [&](size_t task) {
    if (task == 0) {
      ok[0] = succeeded(checkExactlyOnce(true));
      return;
    }
    int64_t pi = task - 1;
    ok[task] =
        succeeded(checkRelays(pi, true)) && succeeded(checkSteps(pi, true));
  });
  if (llvm::all_of(ok, [](char c) { return c; }))
    return success();
  if (failed(checkExactlyOnce(false)))
    return failure();
  for (int64_t pi = 0; pi < n; ++pi)
    if (failed(checkRelays(pi, false)))
      return failure();
  for (int64_t pi = 0; pi < n; ++pi)
    if (failed(checkSteps(pi, false)))
      return failure();
  return success();
}

LogicalResult Checker::run() {
  if (failed(checkGroups()) || failed(checkItems()) || failed(checkStreams()) ||
      failed(checkCopies()) || failed(checkDeliveries()))
    return failure();
  return success();
}

LogicalResult reshard::rt::checkPlan(const EncodedPlan &plan) {
  return Checker(plan).run();
}
