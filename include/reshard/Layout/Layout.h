//===- Layout.h - Meshes, shardings and topologies as plain data -*- C++
//-*-===//
//
// The layout model of DESIGN.md without any MLIR: the dialect's verifier, the
// JSON importer and every later pass share these definitions and checks, so a
// layout is judged the same way wherever it comes from.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_LAYOUT_LAYOUT_H
#define RESHARD_LAYOUT_LAYOUT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace reshard {

/// Receives one layout error: where it is (a path such as `dims[1]`, relative
/// to what the caller handed in) and what is wrong.
using LayoutDiagFn =
    llvm::function_ref<void(const std::string &path, const std::string &msg)>;

/// Largest number of devices in one mesh (ranks are C `int` in NCCL and MPI).
inline constexpr int64_t kMaxMeshDevices = INT32_MAX;

/// Largest global rank: the communicator size a plan needs, the largest
/// rank + 1, must be a C `int` too.
inline constexpr int64_t kMaxRank = INT32_MAX - 1;

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

/// One tensor dim as written: mesh axis names major to minor, optional blocks.
struct DimShardingSpec {
  llvm::SmallVector<std::string> axes;
  llvm::SmallVector<int64_t> blocks; // empty: the dim is one block
};

/// A sharding as written: one entry per tensor dim.
struct ShardingSpec {
  llvm::SmallVector<DimShardingSpec> dims;
};

/// One tensor dim resolved against its mesh: axes as mesh axis indices.
struct DimSharding {
  llvm::SmallVector<unsigned> axes;
  llvm::SmallVector<int64_t> blocks; // empty: the dim is one block
};

/// A sharding resolved against its mesh and checked against a global shape.
struct Sharding {
  llvm::SmallVector<DimSharding> dims;
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
/// unique non-negative rank per device. Reports every problem found.
bool verifyMesh(const MeshSpec &mesh, const std::string &path,
                LayoutDiagFn diag);

/// Checks a topology: positive sizes, the NVLink domain a whole number of
/// nodes, positive bandwidths, non-negative latencies.
bool verifyTopology(const TopologySpec &topo, const std::string &path,
                    LayoutDiagFn diag);

/// Checks a global shape: non-negative dims and a byte size (with
/// `elementBytes` per element) that fits in int64_t.
bool verifyTensorShape(llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                       const std::string &path, LayoutDiagFn diag);

/// Resolves `spec` against a mesh with axes `meshAxes` for a tensor of `shape`
/// (already checked by verifyTensorShape): one entry per dim, known axes each
/// used at most once, blocks non-negative and summing to the dim. Returns
/// std::nullopt after reporting through `diag` when the sharding is malformed.
std::optional<Sharding> resolveSharding(const ShardingSpec &spec,
                                        llvm::ArrayRef<std::string> meshAxes,
                                        llvm::ArrayRef<int64_t> shape,
                                        const std::string &path,
                                        LayoutDiagFn diag);

/// Bytes per element of a dtype name of the interchange format (`bf16`,
/// `fp8e4m3`, `uint32`, ...), or std::nullopt for an unknown name.
std::optional<int64_t> dtypeBytes(llvm::StringRef dtype);

/// The dtype names of the interchange format, for error messages.
llvm::ArrayRef<llvm::StringRef> dtypeNames();

} // namespace reshard

#endif // RESHARD_LAYOUT_LAYOUT_H
