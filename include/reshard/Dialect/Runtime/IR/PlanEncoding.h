//===- PlanEncoding.h - A reshard_rt.plan as engine tables ------*- C++ -*-===//
//
// The one translation from the reshard_rt ops to the tables of
// reshard::engine::Plan (include/reshard/ExecutionEngine/PlanTables.h): the
// plan verifier checks them, the C++ emitter writes them, and the
// in-process executor runs them, so all three see the same plan.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_DIALECT_RUNTIME_IR_PLANENCODING_H
#define RESHARD_DIALECT_RUNTIME_IR_PLANENCODING_H

#include "reshard/Dialect/Runtime/IR/RuntimeOps.h"
#include "reshard/ExecutionEngine/Engine.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace reshard::rt {

/// The tables of one plan, owned, with the ops their rows come from.
/// `view()` points into them: not copyable or movable.
class EncodedPlan {
public:
  /// Encodes `plan`; null after a diagnostic when its ops do not make
  /// tables (misnumbered or misplaced ops, a reference to a missing list,
  /// a receive without its send, sizes that overflow).
  static std::unique_ptr<EncodedPlan> encode(PlanOp plan);

  EncodedPlan(const EncodedPlan &) = delete;
  EncodedPlan &operator=(const EncodedPlan &) = delete;

  const engine::Plan &view() const { return plan; }
  PlanOp getPlanOp() const { return planOp; }

  /// Where an item, a stream, or a rank's receive came from.
  ItemsOp itemsOpOf(int64_t item) const;
  SendOp sendOpOf(int64_t stream) const { return sendOps[stream]; }
  RecvOp recvOpOf(int64_t program, int64_t i) const;
  RankOp rankOpOf(int64_t program) const { return rankOps[program]; }
  GroupOp groupOpOf(int64_t group) const { return groupOps[group]; }
  ClassOp classOpOf(int64_t cls) const { return classOps[cls]; }
  /// The item list (reshard_rt.items index) of a stream or a copy.
  int64_t itemsListOf(int64_t stream) const { return streamList[stream]; }

  /// FNV-1a over every table: what the ranks compare before moving bytes.
  uint64_t fingerprint() const;

  // The tables, in the engine's schema.
  std::string name;
  std::vector<std::string> tensorNames;
  std::vector<const char *> tensorNamePtrs;
  /// Interchange dtype names, one per tensor; empty when the plan states
  /// none (then tensor_dtypes is null).
  std::vector<std::string> tensorDtypes;
  std::vector<const char *> tensorDtypePtrs;
  std::vector<int64_t> tensorGroup, words;
  std::vector<engine::Mesh> meshes;
  std::vector<engine::Class> classes;
  std::vector<engine::Piece> pieces;
  std::vector<engine::Group> groups;
  std::vector<engine::Item> items;
  /// Every stream whole, in table order (what the encoder checks and the
  /// fingerprint covers); the plan stores them as rows and shared bodies.
  std::vector<engine::Stream> streams;
  std::vector<engine::StreamRow> streamRows;
  std::vector<engine::StreamBody> streamBodies;
  std::vector<engine::RankProgram> programs;
  std::vector<int32_t> programOfRank;
  /// Quantized destinations (empty when none); tensorQuant has one entry
  /// per tensor when there are any.
  std::vector<engine::QuantClass> quantClasses;
  std::vector<engine::QuantTensor> quantTensors;
  std::vector<int32_t> tensorQuant;
  /// First item of each reshard_rt.items list, and one past the last.
  std::vector<int64_t> listFirst;

private:
  EncodedPlan() = default;
  /// Appends `v` to `words`, or finds it there already: equal lists share
  /// storage (descriptors, combo maps, mesh ranks).
  int64_t intern(llvm::ArrayRef<int64_t> v);
  void finish(PlanOp op);
  /// Reads and checks `quant_classes` and `quant_tensors` once the classes
  /// and groups are encoded; false after a diagnostic.
  bool encodeQuant(PlanOp op);

  engine::Plan plan = {};
  PlanOp planOp;
  std::map<std::vector<int64_t>, int64_t> interned;
  llvm::SmallVector<ClassOp> classOps;
  llvm::SmallVector<GroupOp> groupOps;
  llvm::SmallVector<ItemsOp> itemsOps;
  llvm::SmallVector<RankOp> rankOps;
  std::vector<SendOp> sendOps;
  std::vector<int64_t> streamList;
  /// Per program, its receive ops, in order.
  std::vector<std::vector<RecvOp>> recvOps;
};

/// The first way in which `plan`'s tables break what the generated code
/// relies on (see reshard_rt.plan), as a message at the op it concerns;
/// success when there is none. Works on the compact tables: nothing is
/// listed per piece of a tensor.
mlir::LogicalResult checkPlan(const EncodedPlan &plan);

} // namespace reshard::rt

#endif // RESHARD_DIALECT_RUNTIME_IR_PLANENCODING_H
