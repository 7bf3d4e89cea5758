//===- PlanEncoding.cpp - A reshard_rt.plan as engine tables --------------===//
#include "reshard/Dialect/Runtime/IR/PlanEncoding.h"

#include "reshard/Layout/Layout.h"
#include "reshard/Layout/PlanRows.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <climits>
#include <tuple>
#include <type_traits>

static_assert(reshard::engine::kTransitIn == reshard::kTransitInPhase &&
                  reshard::engine::kTransitOut == reshard::kTransitOutPhase,
              "the engine and the planner number transit phases alike");

using namespace mlir;
using namespace reshard;
using namespace reshard::rt;

int64_t EncodedPlan::intern(ArrayRef<int64_t> v) {
  std::vector<int64_t> key(v.begin(), v.end());
  auto [it, inserted] = interned.try_emplace(key, words.size());
  if (inserted)
    words.insert(words.end(), v.begin(), v.end());
  return it->second;
}

ItemsOp EncodedPlan::itemsOpOf(int64_t item) const {
  auto it = std::upper_bound(listFirst.begin(), listFirst.end(), item);
  return itemsOps[std::max<int64_t>(0, it - listFirst.begin() - 1)];
}

RecvOp EncodedPlan::recvOpOf(int64_t program, int64_t i) const {
  return recvOps[program][i];
}

namespace {
/// Null, once the diagnostic `d` has been reported (at the end of the
/// caller's full expression).
std::nullptr_t reported(InFlightDiagnostic &&d) { return nullptr; }

/// The order the plan's ops come in.
enum class Section { Meshes, Classes, Groups, Items, Ranks };

template <class T> bool fitsInt32(T v) { return v >= 0 && v <= INT32_MAX; }
} // namespace

std::unique_ptr<EncodedPlan> EncodedPlan::encode(PlanOp op) {
  std::unique_ptr<EncodedPlan> e(new EncodedPlan());
  e->name = op.getSymName().str();
  // Names key the tensors (their shard files, the caller's arrays): unique.
  llvm::StringMap<size_t> firstOf;
  for (Attribute t : op.getTensors()) {
    StringRef name = cast<StringAttr>(t).getValue();
    if (name.empty() || name.contains('\0'))
      return reported(op.emitOpError()
                      << "names tensor " << e->tensorNames.size()
                      << " with an empty name or one holding a NUL "
                         "character; C callers get names as C strings");
    auto [it, fresh] = firstOf.try_emplace(name, e->tensorNames.size());
    if (!fresh)
      return reported(op.emitOpError()
                      << "names tensor " << e->tensorNames.size() << " '"
                      << name << "', as tensor " << it->second
                      << "; a plan's tensor names are unique");
    e->tensorNames.push_back(name.str());
  }
  int64_t numTensors = e->tensorNames.size();
  int64_t numRanks = op.getNumRanks();
  if (numRanks < 1 || numRanks > kMaxPlanRanks)
    return reported(op.emitOpError()
                    << "num_ranks " << numRanks << " must be in [1, 2^24]");
  if (numTensors > INT32_MAX)
    return reported(op.emitOpError() << "has more than 2^31 tensors");
  e->tensorGroup.assign(numTensors, -1);
  if (std::optional<ArrayAttr> dtypes = op.getDtypes()) {
    if (static_cast<int64_t>(dtypes->size()) != numTensors)
      return reported(op.emitOpError()
                      << "has " << dtypes->size() << " dtypes for "
                      << numTensors << " tensors; give one per tensor");
    for (Attribute d : *dtypes) {
      StringRef name = cast<StringAttr>(d).getValue();
      if (!dtypeBytes(name))
        return reported(op.emitOpError()
                        << "dtype '" << name << "' is not one of: "
                        << llvm::join(dtypeNames(), ", "));
      e->tensorDtypes.push_back(name.str());
    }
  }

  Section at = Section::Meshes;
  auto enter = [&](Operation *child, Section s, int64_t index,
                   size_t position) -> bool {
    static const char *names[] = {"meshes", "classes", "groups", "item lists",
                                  "ranks"};
    if (s < at) {
      child->emitOpError() << "comes after the plan's "
                           << names[static_cast<int>(at)]
                           << "; a plan lists meshes, classes, groups, item "
                              "lists, then ranks";
      return false;
    }
    at = s;
    if (s != Section::Ranks && index != static_cast<int64_t>(position)) {
      child->emitOpError() << "is numbered " << index << " but is "
                           << names[static_cast<int>(s)] << " entry "
                           << position << "; number them in order";
      return false;
    }
    return true;
  };

  std::map<std::tuple<int64_t, int64_t, int64_t>, int64_t> streamIndex;
  struct PendingRecv {
    int64_t program;
    RecvOp op;
  };
  std::vector<PendingRecv> recvs;
  for (Operation &child : op.getBody().front()) {
    if (auto mesh = dyn_cast<MeshOp>(child)) {
      if (!enter(mesh, Section::Meshes, mesh.getIndex(), e->meshes.size()))
        return nullptr;
      for (int64_t r : mesh.getRanks())
        if (r < 0 || r >= numRanks)
          return reported(mesh.emitOpError()
                          << "lists rank " << r << " outside the " << numRanks
                          << " ranks of the plan");
      e->meshes.push_back({static_cast<int64_t>(mesh.getRanks().size()),
                           e->intern(mesh.getRanks())});
    } else if (auto cls = dyn_cast<ClassOp>(child)) {
      if (!enter(cls, Section::Classes, cls.getIndex(), e->classes.size()))
        return nullptr;
      engine::Class c = {};
      c.first_piece = e->pieces.size();
      for (bool src : {true, false}) {
        SmallVector<int64_t> bytes;
        for (int64_t k = 0, n = cls.getNumCombos(src); k < n; ++k) {
          std::optional<int64_t> b = cls.getElementBytes();
          for (int64_t s : cls.getShardShape(src, k))
            if (b)
              b = llvm::checkedMul(*b, s);
          if (!b)
            return reported(cls.emitOpError()
                            << "has a shard whose bytes overflow "
                               "64 bits");
          bytes.push_back(*b);
        }
        ArrayRef<int64_t> comboOf =
            src ? cls.getSrcComboOf() : cls.getDstComboOf();
        (src ? c.src_devices : c.dst_devices) = comboOf.size();
        (src ? c.src_combo_of : c.dst_combo_of) = e->intern(comboOf);
        (src ? c.src_combos : c.dst_combos) = bytes.size();
        (src ? c.src_shard_bytes : c.dst_shard_bytes) = e->intern(bytes);
        // The engine reports buffer shapes: extents in stored dim order.
        SmallVector<int64_t> stored;
        for (int64_t k = 0, n = cls.getNumCombos(src); k < n; ++k)
          llvm::append_range(stored, storedShape(cls.getShardShape(src, k),
                                                 cls.getDimOrder(src)));
        (src ? c.src_shapes : c.dst_shapes) = e->intern(stored);
      }
      c.ndim = cls.getRank();
      for (PieceOp piece : cls.getBody().front().getOps<PieceOp>()) {
        std::optional<int64_t> bytes = cls.getElementBytes();
        for (int64_t s : piece.getSizes())
          if (bytes)
            bytes = llvm::checkedMul(*bytes, s);
        if (!bytes)
          return reported(piece.emitOpError()
                          << "has a box whose bytes overflow 64 "
                             "bits");
        e->pieces.push_back({piece.getSrcComboAttr().getInt(),
                             piece.getDstComboAttr().getInt(), *bytes,
                             e->intern(piece.getPack().descriptor()),
                             e->intern(piece.getUnpack().descriptor()),
                             e->intern(piece.getCopy().descriptor())});
      }
      c.num_pieces = e->pieces.size() - c.first_piece;
      e->classes.push_back(c);
      e->classOps.push_back(cls);
    } else if (auto group = dyn_cast<GroupOp>(child)) {
      int64_t g = e->groups.size();
      if (!enter(group, Section::Groups, group.getIndex(), g))
        return nullptr;
      // Classes come first, so a group's class is known (encodeQuant
      // reads it before the plan's checks run).
      int64_t cls = group.getClassIndexAttr().getInt();
      int64_t numClasses = e->classOps.size();
      if (cls < 0 || cls >= numClasses)
        return reported(group.emitOpError()
                        << "names class " << cls << " of " << numClasses);
      for (int64_t t : group.getTensors()) {
        if (t < 0 || t >= numTensors)
          return reported(group.emitOpError()
                          << "lists tensor " << t << " of the " << numTensors
                          << " of the plan");
        if (e->tensorGroup[t] == g)
          return reported(group.emitOpError()
                          << "lists tensor " << t << " ('" << e->tensorNames[t]
                          << "') twice; a group lists each member once");
        if (e->tensorGroup[t] != -1) {
          InFlightDiagnostic diag = group.emitOpError()
                                    << "lists tensor " << t << " ('"
                                    << e->tensorNames[t] << "'), which group "
                                    << e->tensorGroup[t] << " lists too";
          diag.attachNote(e->groupOps[e->tensorGroup[t]].getLoc())
              << "the other group";
          return nullptr;
        }
        e->tensorGroup[t] = g;
        // A payload quantized on its receivers lands as FP8 but moves at
        // full precision: encodeQuant checks it.
        if (!e->tensorDtypes.empty() &&
            dtypeBytes(e->tensorDtypes[t]) !=
                e->classOps[cls].getElementBytes() &&
            !(e->tensorDtypes[t] == "fp8e4m3" &&
              (e->classOps[cls].getElementBytes() == 2 ||
               e->classOps[cls].getElementBytes() == 4)))
          return reported(group.emitOpError()
                          << "lists tensor " << t << " ('" << e->tensorNames[t]
                          << "') of dtype " << e->tensorDtypes[t]
                          << " in class " << cls << " of "
                          << e->classOps[cls].getElementBytes()
                          << "-byte elements");
      }
      e->groups.push_back(
          {group.getClassIndexAttr().getInt(), group.getSrcMeshAttr().getInt(),
           group.getDstMeshAttr().getInt(), e->intern(group.getTensors()),
           static_cast<int64_t>(group.getTensors().size())});
      e->groupOps.push_back(group);
    } else if (auto items = dyn_cast<ItemsOp>(child)) {
      if (!enter(items, Section::Items, items.getIndex(), e->itemsOps.size()))
        return nullptr;
      e->listFirst.push_back(e->items.size());
      ArrayRef<int64_t> rows = items.getRows();
      // Streams name their first item with a 32-bit index.
      if (e->items.size() + rows.size() / 5 > size_t(INT32_MAX))
        return reported(items.emitOpError()
                        << "brings the plan past 2^31 items");
      for (size_t i = 0; i + 5 <= rows.size(); i += 5) {
        for (int k = 0; k < 5; ++k)
          if (!fitsInt32(rows[i + k]))
            return reported(items.emitOpError()
                            << "item " << i / 5 << " has field " << rows[i + k]
                            << " outside [0, 2^31)");
        e->items.push_back({static_cast<int32_t>(rows[i]),
                            static_cast<int32_t>(rows[i + 1]),
                            static_cast<int32_t>(rows[i + 2]),
                            static_cast<int32_t>(rows[i + 3]),
                            static_cast<int32_t>(rows[i + 4])});
      }
      e->itemsOps.push_back(items);
    } else if (auto rank = dyn_cast<RankOp>(child)) {
      if (!enter(rank, Section::Ranks, 0, 0))
        return nullptr;
      int64_t r = rank.getRank();
      if (r < 0 || r >= numRanks)
        return reported(rank.emitOpError()
                        << "is rank " << r << " of a plan of " << numRanks
                        << " ranks");
      if (!e->rankOps.empty() && r <= e->rankOps.back().getRankAttr().getInt())
        return reported(rank.emitOpError()
                        << "follows rank " << e->rankOps.back().getRank()
                        << "; ranks are listed once each, ascending");
      int64_t program = e->programs.size();
      engine::RankProgram p = {};
      p.rank = r;
      p.workspace = rank.getWorkspace();
      p.first_send = e->streams.size();
      auto list = [&](Operation *user, int64_t index, int64_t &first,
                      int64_t &count) -> bool {
        if (index < 0 || index >= static_cast<int64_t>(e->itemsOps.size())) {
          user->emitOpError()
              << "names item list " << index << " of " << e->itemsOps.size();
          return false;
        }
        first = e->listFirst[index];
        count = e->itemsOps[index].getRows().size() / 5;
        return true;
      };
      e->recvOps.emplace_back();
      for (Operation &step : rank.getBody().front()) {
        if (auto copy = dyn_cast<CopyOp>(step)) {
          if (!list(copy, copy.getItems(), p.first_copy, p.num_copies))
            return nullptr;
        } else if (auto send = dyn_cast<SendOp>(step)) {
          int64_t first, count;
          if (!list(send, send.getItems(), first, count))
            return nullptr;
          if (send.getPeerAttr().getInt() >= numRanks || count > INT32_MAX)
            return reported(send.emitOpError()
                            << "sends to rank " << send.getPeer()
                            << " of a plan of " << numRanks << " ranks");
          if (e->streams.size() >= size_t(INT32_MAX))
            return reported(send.emitOpError()
                            << "brings the plan past 2^31 streams");
          streamIndex[{r, send.getPeer(), send.getPhase()}] = e->streams.size();
          e->streams.push_back(
              {static_cast<int32_t>(r), static_cast<int32_t>(send.getPeer()),
               send.getPhaseAttr().getInt(), static_cast<int32_t>(count),
               static_cast<int32_t>(first), send.getStartAttr().getInt(),
               send.getQuotaAttr().getInt(), send.getBytesAttr().getInt()});
          e->sendOps.push_back(send);
          e->streamList.push_back(send.getItems());
        } else if (auto recv = dyn_cast<RecvOp>(step)) {
          recvs.push_back({program, recv});
          e->recvOps.back().push_back(recv);
        }
      }
      p.num_sends = e->streams.size() - p.first_send;
      e->programs.push_back(p);
      e->rankOps.push_back(rank);
    } else {
      return reported(child.emitOpError()
                      << "is not part of a reshard_rt.plan");
    }
  }

  // Receives name their sender's stream: one row serves both ends.
  std::vector<int64_t> receivers(e->streams.size(), 0);
  std::vector<std::vector<int64_t>> recvLists(e->programs.size());
  for (const PendingRecv &pr : recvs) {
    RecvOp recv = pr.op;
    int64_t r = e->programs[pr.program].rank;
    auto it = streamIndex.find({recv.getPeer(), r, recv.getPhase()});
    if (it == streamIndex.end())
      return reported(recv.emitOpError()
                      << "receives from rank " << recv.getPeer() << " in phase "
                      << recv.getPhase() << ", which sends nothing to rank "
                      << r << " in that phase");
    const engine::Stream &s = e->streams[it->second];
    if (s.start != recv.getStartAttr().getInt() ||
        s.quota != recv.getQuotaAttr().getInt() ||
        s.bytes != recv.getBytesAttr().getInt() ||
        e->streamList[it->second] != recv.getItemsAttr().getInt()) {
      InFlightDiagnostic diag =
          recv.emitOpError()
          << "differs from the send it receives (start " << s.start
          << ", quota " << s.quota << ", bytes " << s.bytes << ", items "
          << e->streamList[it->second] << "); both ends must agree";
      diag.attachNote(e->sendOps[it->second].getLoc()) << "the send";
      return nullptr;
    }
    if (receivers[it->second]++)
      return reported(recv.emitOpError() << "receives a stream another receive "
                                            "already takes");
    recvLists[pr.program].push_back(it->second);
  }
  for (size_t s = 0; s < e->streams.size(); ++s)
    if (!receivers[s])
      return reported(e->sendOps[s].emitOpError()
                      << "is received by no reshard_rt.recv of rank "
                      << e->streams[s].receiver);
  for (size_t p = 0; p < e->programs.size(); ++p) {
    engine::RankProgram &prog = e->programs[p];
    prog.recvs = e->words.size(); // not interned: lists are per rank
    prog.num_recvs = recvLists[p].size();
    e->words.insert(e->words.end(), recvLists[p].begin(), recvLists[p].end());
  }
  e->programOfRank.assign(numRanks, -1);
  for (size_t p = 0; p < e->programs.size(); ++p)
    e->programOfRank[e->programs[p].rank] = p;
  e->listFirst.push_back(e->items.size());
  if (!e->encodeQuant(op))
    return nullptr;
  e->finish(op);
  return e;
}

bool EncodedPlan::encodeQuant(PlanOp op) {
  std::optional<ArrayRef<int64_t>> classRows = op.getQuantClasses();
  std::optional<ArrayRef<int64_t>> tensorRows = op.getQuantTensors();
  auto bad = [&](const Twine &msg) {
    op.emitOpError() << msg;
    return false;
  };
  // Every FP8 tensor moved at full precision is a payload quantized on its
  // receivers.
  auto checkWidenedPayloads = [&] {
    for (int64_t t = 0; t < int64_t(tensorDtypes.size()); ++t) {
      if (tensorGroup[t] < 0 || tensorDtypes[t] != "fp8e4m3")
        continue;
      int64_t bytes = classOps[groups[tensorGroup[t]].cls].getElementBytes();
      int32_t qi = tensorQuant.empty() ? -1 : tensorQuant[t];
      if (bytes != 1 && (qi < 0 || quantTensors[qi].payload != t ||
                         quantClasses[quantTensors[qi].qclass].side !=
                             engine::kQuantOnReceiver))
        return bad(llvm::formatv("tensor {0} ('{1}') of dtype fp8e4m3 is in "
                                 "a class of {2}-byte elements but is no "
                                 "payload quantized on its receivers",
                                 t, tensorNames[t], bytes));
    }
    return true;
  };
  if (!tensorRows && !classRows)
    return checkWidenedPayloads();
  if (!tensorRows || !classRows)
    return bad("states quant_classes or quant_tensors without the other");
  // quant_classes: kind, ndim, blocks, combos, then per combo and dim a
  // run count and the runs. Checked against the payload classes below.
  struct Row {
    int64_t kind, side, ndim, blocksAt, combos, combosAt;
  };
  std::vector<Row> rows;
  std::vector<std::vector<std::vector<std::vector<int64_t>>>> runsOf;
  ArrayRef<int64_t> c = *classRows;
  size_t at = 0;
  auto next = [&](int64_t &v) {
    if (at >= c.size())
      return false;
    v = c[at++];
    return true;
  };
  // A row's combos are its payload class's (checked below): bound them by
  // the classes' before anything is allocated per combo.
  int64_t maxCombos = 0;
  for (ClassOp cls : classOps)
    maxCombos =
        std::max({maxCombos, cls.getNumCombos(true), cls.getNumCombos(false)});
  while (at < c.size()) {
    Row r = {};
    if (!next(r.kind) || !next(r.side) || !next(r.ndim) || r.ndim < 1 ||
        r.ndim > 64 ||
        (r.kind != engine::kQuantBlock && r.kind != engine::kQuantMx &&
         r.kind != engine::kQuantBlockUe8m0) ||
        (r.side != engine::kQuantOnSender &&
         r.side != engine::kQuantOnReceiver))
      return bad(llvm::formatv("quant_classes row {0}: a row starts with the "
                               "kind (1 block, 2 mx, 3 block with ue8m0 "
                               "scales), the side (0 sender, 1 "
                               "receiver) and a rank in [1, 64]",
                               rows.size()));
    SmallVector<int64_t> blocks(r.ndim);
    for (int64_t &b : blocks)
      if (!next(b) || b < 1)
        return bad(llvm::formatv("quant_classes row {0}: block sizes must "
                                 "be at least 1",
                                 rows.size()));
    r.blocksAt = intern(blocks);
    // Each combo states a run count per dim: the words left bound them too,
    // so what is allocated per combo is bounded by the input.
    if (!next(r.combos))
      return bad(llvm::formatv("quant_classes row {0}: the combo count is "
                               "missing",
                               rows.size()));
    if (r.combos >= 0 && r.combos <= maxCombos &&
        r.combos > int64_t(c.size() - at) / r.ndim)
      return bad(llvm::formatv("quant_classes row {0}: {1} combos of rank "
                               "{2} need at least {3} words of runs, {4} are "
                               "left: the runs are cut short",
                               rows.size(), r.combos, r.ndim, r.combos * r.ndim,
                               c.size() - at));
    if (r.combos < 0 || r.combos > maxCombos)
      return bad(llvm::formatv("quant_classes row {0}: {1} combos; a row has "
                               "its payload class's, and no class has more "
                               "than {2}",
                               rows.size(), r.combos, maxCombos));
    std::vector<std::vector<std::vector<int64_t>>> runs(r.combos);
    SmallVector<int64_t> index;
    for (int64_t k = 0; k < r.combos; ++k) {
      SmallVector<int64_t> record;
      runs[k].resize(r.ndim);
      for (int64_t d = 0; d < r.ndim; ++d) {
        int64_t n;
        if (!next(n) || n < 0 || n > int64_t(c.size()))
          return bad(llvm::formatv("quant_classes row {0}: runs of combo "
                                   "{1} dim {2} are cut short",
                                   rows.size(), k, d));
        record.push_back(n);
        for (int64_t i = 0; i < n; ++i) {
          int64_t len;
          if (!next(len) || len < 0)
            return bad(llvm::formatv("quant_classes row {0}: a run of "
                                     "combo {1} dim {2} is cut short or "
                                     "negative",
                                     rows.size(), k, d));
          record.push_back(len);
          runs[k][d].push_back(len);
        }
      }
      index.push_back(intern(record));
    }
    r.combosAt = intern(index);
    rows.push_back(r);
    runsOf.push_back(std::move(runs));
  }
  ArrayRef<int64_t> t = *tensorRows;
  int64_t numTensors = tensorNames.size();
  if (t.size() % 4)
    return bad("quant_tensors has rows of 4: payload, scales, input, row");
  tensorQuant.assign(numTensors, -1);
  for (size_t i = 0; i < t.size(); i += 4) {
    int64_t payload = t[i], scales = t[i + 1], input = t[i + 2], row = t[i + 3];
    auto at = [&] { return llvm::formatv("quant_tensors[{0}]: ", i / 4); };
    if (payload < 0 || payload >= numTensors || scales < 0 ||
        scales >= numTensors || payload == scales)
      return bad(at() + "payload and scales must be two tensors of the plan");
    if (tensorQuant[payload] >= 0 || tensorQuant[scales] >= 0)
      return bad(at() + "a tensor is quantized or scales only once");
    // The scales' name is the callers' key for them (Python's plan.tensors).
    if (tensorNames[scales] != tensorNames[payload] + ".scale")
      return bad(at() + "the scales of '" + tensorNames[payload] +
                 "' are named '" + tensorNames[payload] + ".scale', not '" +
                 tensorNames[scales] + "'");
    if (tensorGroup[payload] < 0 || tensorGroup[scales] < 0)
      return bad(at() + "payload and scales must each be in a group");
    if (input < 0 || input > 2 || row < 0 || row >= int64_t(rows.size()))
      return bad(at() + "input must be 0 (fp32), 1 (bf16) or 2 (fp16), and "
                        "the row one of quant_classes");
    const Row &r = rows[row];
    const engine::Group &pg = groups[tensorGroup[payload]],
                        &sg = groups[tensorGroup[scales]];
    const engine::Class &pc = classes[pg.cls], &sc = classes[sg.cls];
    ClassOp pOp = classOps[pg.cls], sOp = classOps[sg.cls];
    int64_t scaleBytes = r.kind == engine::kQuantMx ? 1 : 4;
    // On the sender, payload and scales leave one source mesh as FP8 and
    // scales; on the receiver, the payload moves at full precision and the
    // scales stay on the destination mesh (an identity there).
    bool sender = r.side == engine::kQuantOnSender;
    if (!pOp.getDimOrder(sender).empty() || !sOp.getDimOrder(sender).empty())
      return bad(at() + "the quantizing side's shards must be row-major "
                        "in logical dim order (no dim_order)");
    int64_t moved = sender ? 1 : engine::quant_input_bytes(input);
    if (static_cast<int64_t>(pOp.getElementBytes()) != moved ||
        static_cast<int64_t>(sOp.getElementBytes()) != scaleBytes ||
        pc.ndim != r.ndim || sc.ndim != r.ndim ||
        pOp.getNumCombos(sender) != r.combos ||
        (sender ? pg.src_mesh != sg.src_mesh
                : pg.dst_mesh != sg.dst_mesh || sg.src_mesh != sg.dst_mesh))
      return bad(at() + "the payload's class must have " + Twine(moved) +
                 "-byte elements and the row's rank and " +
                 (sender ? "source" : "destination") +
                 " combos, the scales' class " + Twine(scaleBytes) +
                 "-byte elements, " +
                 (sender ? "both one source mesh"
                         : "from and to the payload's destination mesh"));
    if (!sender && tensorDtypes.size() > size_t(payload) &&
        tensorDtypes[payload] != "fp8e4m3")
      return bad(at() +
                 "a payload quantized on its receivers lands as "
                 "fp8e4m3, not " +
                 tensorDtypes[payload]);
    // Every device of the quantizing side: runs that add up to its payload
    // shard, and blocks that are its scales shard.
    ArrayRef<int64_t> pCombo =
                          sender ? pOp.getSrcComboOf() : pOp.getDstComboOf(),
                      sCombo =
                          sender ? sOp.getSrcComboOf() : sOp.getDstComboOf();
    ArrayRef<int64_t> blocks(words.data() + r.blocksAt, r.ndim);
    for (size_t dev = 0; dev < pCombo.size(); ++dev) {
      ArrayRef<int64_t> pShape = pOp.getShardShape(sender, pCombo[dev]);
      ArrayRef<int64_t> sShape = sOp.getShardShape(sender, sCombo[dev]);
      for (int64_t d = 0; d < r.ndim; ++d) {
        int64_t sum = 0, nblocks = 0;
        for (int64_t len : runsOf[row][pCombo[dev]][d]) {
          sum += len;
          nblocks += len / blocks[d] + (len % blocks[d] != 0);
        }
        if (sum != pShape[d] || nblocks != sShape[d])
          return bad(at() +
                     llvm::formatv("on {0} device {1}, dim {2}: runs of {3} "
                                   "elements in {4} blocks for a payload shard "
                                   "of {5} and a scales shard of {6}",
                                   sender ? "source" : "destination", dev, d,
                                   sum, nblocks, pShape[d], sShape[d]));
      }
    }
    // Scales quantized on receipt are written by the quantizer alone: no
    // stream may carry them (they have no source buffer to pack from).
    for (size_t si = 0; !sender && si < streams.size(); ++si) {
      const engine::Stream &st = streams[si];
      for (int64_t i = st.first_item; i < st.first_item + st.num_items; ++i)
        if (items[i].group == tensorGroup[scales])
          return bad(at() + llvm::formatv("the scales of a payload quantized "
                                          "on its receivers move nothing, "
                                          "but rank {0} sends them to rank "
                                          "{1}",
                                          st.sender, st.receiver));
    }
    tensorQuant[payload] = tensorQuant[scales] = quantTensors.size();
    quantTensors.push_back(
        {static_cast<int32_t>(payload), static_cast<int32_t>(scales),
         static_cast<int32_t>(input), static_cast<int32_t>(row)});
  }
  for (const Row &r : rows)
    quantClasses.push_back({r.kind, r.ndim, r.blocksAt, r.combosAt, r.side});
  return checkWidenedPayloads();
}

void EncodedPlan::finish(PlanOp op) {
  planOp = op;
  for (const std::string &n : tensorNames)
    tensorNamePtrs.push_back(n.c_str());
  plan.name = name.c_str();
  plan.num_ranks = static_cast<int>(op.getNumRanks());
  plan.num_tensors = static_cast<int>(tensorNames.size());
  plan.tensor_names = tensorNamePtrs.data();
  for (const std::string &d : tensorDtypes)
    tensorDtypePtrs.push_back(d.c_str());
  plan.tensor_dtypes =
      tensorDtypePtrs.empty() ? nullptr : tensorDtypePtrs.data();
  plan.tensor_group = tensorGroup.data();
  plan.meshes = meshes.data();
  plan.num_meshes = meshes.size();
  plan.classes = classes.data();
  plan.num_classes = classes.size();
  plan.pieces = pieces.data();
  plan.num_pieces = pieces.size();
  plan.groups = groups.data();
  plan.num_groups = groups.size();
  plan.items = items.data();
  plan.num_items = items.size();
  // Streams that differ only in their receiver share a body.
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int32_t, int32_t>,
           int32_t>
      bodyOf;
  for (const engine::Stream &st : streams) {
    auto [it, added] = bodyOf.try_emplace(
        {st.phase, st.start, st.quota, st.bytes, st.num_items, st.first_item},
        static_cast<int32_t>(streamBodies.size()));
    if (added)
      streamBodies.push_back({st.phase, st.start, st.quota, st.bytes,
                              st.num_items, st.first_item});
    streamRows.push_back({st.sender, st.receiver, it->second});
  }
  plan.streams = streamRows.data();
  plan.num_streams = streamRows.size();
  plan.stream_bodies = streamBodies.data();
  plan.num_stream_bodies = streamBodies.size();
  plan.programs = programs.data();
  plan.num_programs = programs.size();
  plan.program_of_rank = programOfRank.data();
  plan.words = words.data();
  plan.num_words = words.size();
  plan.staging_budget = op.getStagingBudget().value_or(0);
  plan.max_ops_per_step = op.getMaxOpsPerStep().value_or(0);
  plan.receives_ahead = op.getReceivesAhead() ? 1 : 0;
  plan.max_steps = 0;
  plan.quant_classes = quantClasses.empty() ? nullptr : quantClasses.data();
  plan.num_quant_classes = quantClasses.size();
  plan.quant_tensors = quantTensors.empty() ? nullptr : quantTensors.data();
  plan.num_quant_tensors = quantTensors.size();
  plan.tensor_quant = quantTensors.empty() ? nullptr : tensorQuant.data();
  // The stream verifiers bound start + steps by kMaxRankSteps, so these
  // sums hold.
  for (engine::RankProgram &p : programs) {
    p.steps = engine::rank_steps(plan, p);
    plan.max_steps = std::max(plan.max_steps, p.steps);
  }
  // The hash of these tables, not the attribute: an edit leaves that stale.
  plan.fingerprint = fingerprint();
}

uint64_t EncodedPlan::fingerprint() const {
  uint64_t h = 1469598103934665603ull;
  auto bytes = [&](const void *p, size_t n) {
    const uint8_t *b = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i < n; ++i) {
      h ^= b[i];
      h *= 1099511628211ull;
    }
  };
  auto word = [&](uint64_t v) { bytes(&v, sizeof(v)); };
  // Raw bytes only of structs without padding (unspecified bytes would
  // make two compiles of one plan disagree).
  auto vec = [&](const auto &v) {
    using T = std::decay_t<decltype(v[0])>;
    static_assert(std::has_unique_object_representations_v<T>,
                  "a padded struct: fingerprint its fields");
    word(v.size());
    if (!v.empty())
      bytes(v.data(), v.size() * sizeof(v[0]));
  };
  word(name.size());
  bytes(name.data(), name.size());
  word(plan.num_ranks);
  for (const std::string &n : tensorNames) {
    word(n.size());
    bytes(n.data(), n.size());
  }
  for (const std::string &d : tensorDtypes) {
    word(d.size());
    bytes(d.data(), d.size());
  }
  vec(tensorGroup);
  vec(words);
  vec(meshes);
  vec(classes);
  vec(pieces);
  vec(groups);
  vec(items);
  vec(streams);
  vec(quantClasses);
  vec(quantTensors);
  // Programs without their workspace: the lowering fingerprints before it
  // knows it, and the workspace follows from the rest.
  for (const engine::RankProgram &p : programs)
    for (int64_t v : {p.rank, p.first_copy, p.num_copies, p.first_send,
                      p.num_sends, p.recvs, p.num_recvs})
      word(v);
  word(plan.staging_budget);
  word(plan.max_ops_per_step);
  word(plan.receives_ahead);
  return h;
}
