//===- Layout.h - Meshes, shardings, topologies as data ---------*- C++ -*-===//
//
// The layout model of docs/Layout.md without any MLIR: the dialect's verifier,
// the JSON importer and every later pass share these definitions and checks, so
// a layout is judged the same way wherever it comes from.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_LAYOUT_H
#define RESHARD_LAYOUT_LAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>

namespace reshard {

/// One problem with a layout: where it is (a path such as `dims[1]`,
/// relative to what the caller handed in) and what is wrong. The checks
/// below report every problem they find, as LayoutErrors joined into one
/// llvm::Error; the dialect's verifiers turn each into a diagnostic at the
/// op, the JSON importer into one at the JSON value the path names.
class LayoutError : public llvm::ErrorInfo<LayoutError> {
public:
  static char ID;
  LayoutError(std::string path, std::string message)
      : path(std::move(path)), message(std::move(message)) {}
  const std::string &getPath() const { return path; }
  const std::string &getMessage() const { return message; }
  /// `path: message`, or the message alone without a path.
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::string path, message;
};

/// Calls `report` with every LayoutError in `err` and consumes it.
void forEachLayoutError(llvm::Error err,
                        llvm::function_ref<void(const LayoutError &)> report);

/// Largest number of devices in one mesh (ranks are C `int` in NCCL and MPI).
inline constexpr int64_t kMaxMeshDevices = INT32_MAX;

/// Largest global rank: the communicator size a plan needs, the largest
/// rank + 1, must be a C `int` too.
inline constexpr int64_t kMaxRank = INT32_MAX - 1;

/// Ranks of a lowered plan: the generated code keeps a table with an entry
/// per rank, so its largest rank + 1 is at most this (layouts and planned
/// modules may use any rank up to kMaxRank).
inline constexpr int64_t kMaxPlanRanks = int64_t(1) << 24;

/// A plan's byte counts (messages, per-rank and per-link totals, the lower
/// bound, both baselines) are each at most a few times the sum, over its
/// tensors, of the tensor's byte size times the ranks of its two meshes
/// (the gather-broadcast baseline sends every full tensor to each
/// destination rank); keeping that sum below 2^60 keeps them in 64 bits.
inline constexpr int64_t kMaxPlanBytes = int64_t(1) << 60;
/// A topology's bandwidths (GB/s per GPU) and non-zero latencies (us):
/// within these a plan's modelled times, at most 2^62 bytes over the
/// slowest link plus 2^22 steps of the longest latency, and their ratios
/// stay finite (a subnormal bandwidth made them inf and NaN).
inline constexpr double kMinBandwidthGBps = 1e-6, kMaxBandwidthGBps = 1e9;
inline constexpr double kMinLatencyUs = 1e-6, kMaxLatencyUs = 1e9;
/// What a lowered plan's streams may carry in all: a byte may cross several
/// hops (transits, relays, a relay tree's feeder).
inline constexpr int64_t kMaxStreamBytes = int64_t(1) << 62;

/// The smallest staging budget (bytes a rank stages at any instant): one
/// 8-byte element.
inline constexpr int64_t kMinStagingBudget = 8;
/// The most steps a rank's program may take: plans and the runtime keep
/// tables of a rank's load per step (2^22 steps of 1 GiB stage 4 PiB).
inline constexpr int64_t kMaxRankSteps = int64_t(1) << 22;
/// The default staging budget of the scheduler, the pipeline and the tools.
inline constexpr int64_t kDefaultStagingBudget = int64_t(1) << 30;

/// An N-D array of devices; `ranks[linear(c)]` is the global rank at mesh
/// coordinate `c` (row-major).
struct MeshSpec {
  llvm::SmallVector<int64_t> shape;
  llvm::SmallVector<std::string> axes;
  llvm::SmallVector<int64_t> ranks;

  int64_t numDevices() const;
  std::optional<unsigned> axisIndex(llvm::StringRef name) const;
  /// Row-major coordinates of the device at `linear`.
  llvm::SmallVector<int64_t> coords(int64_t linear) const;
  int64_t linear(llvm::ArrayRef<int64_t> coords) const;
};

/// A run of a storage order: logical indices [start, start + length) of a
/// dim, stored consecutively.
struct OrderRun {
  int64_t start = 0;
  int64_t length = 0;
  bool operator==(const OrderRun &o) const {
    return start == o.start && length == o.length;
  }
  bool operator!=(const OrderRun &o) const { return !(*this == o); }
};

/// One tensor dim as written: mesh axis names major to minor, optional
/// blocks, an optional storage order (its runs in stored order).
struct DimShardingSpec {
  llvm::SmallVector<std::string> axes;
  llvm::SmallVector<int64_t> blocks; // empty: the dim is one block
  llvm::SmallVector<OrderRun> order; // empty: stored in logical order
};

/// A destination delivered as FP8 E4M3 with scales (docs/Layout.md
/// "Quantized destinations"): block scaling with one block size per dim and
/// an fp32 scale per block (with `ue8m0`, each scale rounded up to a power
/// of two, as DeepSeek-V3.1's checkpoints and DeepGEMM's E8M0 path hold
/// them), or MXFP8 with blocks of `mx` (32) along the last dim and an E8M0
/// scale per block.
struct QuantSpec {
  enum Kind { None, Block, Mx };
  Kind kind = None;
  llvm::SmallVector<int64_t> block; // Block: one size per dim
  int64_t mx = 0;                   // Mx: the block length (32)
  bool ue8m0 = false;               // Block: power-of-two fp32 scales

  bool empty() const { return kind == None; }
  /// The block size along each dim of a tensor of `rank` (Mx: `mx` on the
  /// last dim, 1 elsewhere).
  llvm::SmallVector<int64_t> blockSizes(size_t rank) const;
  /// `block [128, 128]`, `block [128, 128] ue8m0` or `mx 32`, as the
  /// dialect spells it.
  std::string str() const;
  bool operator==(const QuantSpec &o) const {
    return kind == o.kind && block == o.block && mx == o.mx && ue8m0 == o.ue8m0;
  }
  bool operator!=(const QuantSpec &o) const { return !(*this == o); }
};

/// The MXFP8 block length (OCP MX v1.0).
inline constexpr int64_t kMxBlock = 32;

/// A sharding as written: one entry per tensor dim, the order in which the
/// local buffer stores its dims (outermost first, as torch's `dim_order()`;
/// empty: 0, 1, ..., row-major), and how a destination is quantized.
struct ShardingSpec {
  llvm::SmallVector<DimShardingSpec> dims;
  llvm::SmallVector<int64_t> dimOrder;
  bool dimOrderGiven = false; // written, even as []: checked then
  QuantSpec quant;
};

/// One tensor dim resolved against its mesh: axes as mesh axis indices; the
/// storage order canonical (empty runs dropped, runs that continue each
/// other merged, and no runs at all for the logical order), so that two
/// spellings of one order make one class.
struct DimSharding {
  llvm::SmallVector<unsigned> axes;
  llvm::SmallVector<int64_t> blocks; // empty: the dim is one block
  llvm::SmallVector<OrderRun> order; // empty: stored in logical order
  bool operator==(const DimSharding &o) const {
    return axes == o.axes && blocks == o.blocks && order == o.order;
  }
  bool operator!=(const DimSharding &o) const { return !(*this == o); }
};

/// A sharding resolved against its mesh and checked against a global shape.
/// Equal shardings place every element alike (orders are canonical: a dim
/// order that is the identity is empty).
struct Sharding {
  llvm::SmallVector<DimSharding> dims;
  llvm::SmallVector<int64_t> dimOrder; // empty: row-major in dim order
  QuantSpec quant; // checked in form only; alignment: verifyQuantizedSide
  bool operator==(const Sharding &o) const {
    return dims == o.dims && dimOrder == o.dimOrder && quant == o.quant;
  }
  bool operator!=(const Sharding &o) const { return !(*this == o); }
};

/// Where global ranks sit and how fast their links are. Rank r is on node
/// r / gpusPerNode and in NVLink domain r / nvlDomainSize.
struct TopologySpec {
  int64_t gpusPerNode = 8;
  int64_t nvlDomainSize = 8;
  double nvlinkGBps = 450.0;
  double nicGBps = 50.0;
  double nvlinkLatencyUs = 1.0;
  double nicLatencyUs = 5.0;
};

/// Checks a mesh: one unique non-empty name per axis, positive sizes, one
/// unique non-negative rank per device.
llvm::Error verifyMesh(const MeshSpec &mesh, const std::string &path);

/// Checks a topology: positive sizes, the NVLink domain a whole number of
/// nodes, positive bandwidths, non-negative latencies.
llvm::Error verifyTopology(const TopologySpec &topo, const std::string &path);

/// Checks a global shape: non-negative dims and a byte size (with
/// `elementBytes` per element) that fits in int64_t.
llvm::Error verifyTensorShape(llvm::ArrayRef<int64_t> shape,
                              int64_t elementBytes, const std::string &path);

/// Resolves `spec` against a mesh with axes `meshAxes` for a tensor of
/// `shape` (already checked by verifyTensorShape): one entry per dim, known
/// axes each used at most once, blocks non-negative and summing to the dim,
/// an order's non-empty runs inside the dim, disjoint and covering it.
llvm::Expected<Sharding> resolveSharding(const ShardingSpec &spec,
                                         llvm::ArrayRef<std::string> meshAxes,
                                         llvm::ArrayRef<int64_t> shape,
                                         const std::string &path);

/// Whether `order` lists each of the dims 0..rank-1 exactly once.
bool isPermutation(llvm::ArrayRef<int64_t> order, size_t rank);

/// The shape of a local buffer that stores a shard of `localShape` (its
/// extents by logical dim) with its dims in `dimOrder` (empty: as they are).
llvm::SmallVector<int64_t> storedShape(llvm::ArrayRef<int64_t> localShape,
                                       llvm::ArrayRef<int64_t> dimOrder);

/// The element stride of each logical dim in such a buffer.
llvm::SmallVector<int64_t> storedStrides(llvm::ArrayRef<int64_t> localShape,
                                         llvm::ArrayRef<int64_t> dimOrder);

/// Bytes per element of a dtype name of the interchange format (`bf16`,
/// `fp8e4m3`, `uint32`, ...), or std::nullopt for an unknown name.
std::optional<int64_t> dtypeBytes(llvm::StringRef dtype);

/// The dtype names of the interchange format, for error messages.
llvm::ArrayRef<llvm::StringRef> dtypeNames();

} // namespace reshard

#endif // RESHARD_LAYOUT_LAYOUT_H
