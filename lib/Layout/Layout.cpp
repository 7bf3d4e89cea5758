//===- Layout.cpp - Checks shared by the verifier and the importers -------===//
//
// Each check reports every problem it finds with the path of the offending
// item, and says what would be right.
//
//===----------------------------------------------------------------------===//
#include "reshard/Layout/Layout.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CheckedArithmetic.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>

using namespace reshard;
using llvm::formatv;

/// Doubles as people write them: 450, 0.5, -1e-09, inf, nan.
static std::string fmtDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

char LayoutError::ID = 0;

void LayoutError::log(llvm::raw_ostream &os) const {
  if (!path.empty())
    os << path << ": ";
  os << message;
}

std::error_code LayoutError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

void reshard::forEachLayoutError(
    llvm::Error err, llvm::function_ref<void(const LayoutError &)> report) {
  llvm::handleAllErrors(std::move(err), report);
}

namespace {
/// Collects every problem a check finds into one llvm::Error.
class ErrorList {
public:
  ~ErrorList() { llvm::consumeError(std::move(errors)); }
  void add(const std::string &path, const std::string &msg) {
    errors = llvm::joinErrors(std::move(errors),
                              llvm::make_error<LayoutError>(path, msg));
    any = true;
  }
  bool empty() const { return !any; }
  llvm::Error take() { return std::move(errors); }

private:
  llvm::Error errors = llvm::Error::success();
  bool any = false;
};
} // namespace

static std::string at(const std::string &path, const std::string &field) {
  return path.empty() ? field : path + "." + field;
}
static std::string at(const std::string &path, const std::string &field,
                      size_t index) {
  return at(path, formatv("{0}[{1}]", field, index).str());
}

int64_t MeshSpec::numDevices() const {
  int64_t n = 1;
  for (int64_t s : shape) {
    std::optional<int64_t> product = llvm::checkedMul(n, s);
    if (s <= 0 || !product)
      return -1;
    n = *product;
  }
  return n;
}

std::optional<unsigned> MeshSpec::axisIndex(llvm::StringRef name) const {
  for (unsigned i = 0, e = axes.size(); i < e; ++i)
    if (axes[i] == name)
      return i;
  return std::nullopt;
}

llvm::SmallVector<int64_t> MeshSpec::coords(int64_t linear) const {
  llvm::SmallVector<int64_t> c(shape.size());
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    c[i] = linear % shape[i];
    linear /= shape[i];
  }
  return c;
}

int64_t MeshSpec::linear(llvm::ArrayRef<int64_t> c) const {
  int64_t l = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    l = l * shape[i] + c[i];
  return l;
}

llvm::Error reshard::verifyMesh(const MeshSpec &mesh, const std::string &path) {
  ErrorList errors;
  auto fail = [&](const std::string &where, const std::string &msg) {
    errors.add(where, msg);
  };
  if (mesh.shape.size() != mesh.axes.size())
    fail(at(path, "axes"),
         formatv("the mesh has {0} axis sizes but {1} axis names; give one "
                 "name per axis",
                 mesh.shape.size(), mesh.axes.size()));
  llvm::StringMap<size_t> seen;
  for (size_t i = 0; i < mesh.axes.size(); ++i) {
    const std::string &name = mesh.axes[i];
    if (name.empty()) {
      fail(at(path, "axes", i), "axis name is empty");
      continue;
    }
    auto [it, inserted] = seen.try_emplace(name, i);
    if (!inserted)
      fail(at(path, "axes", i),
           formatv("axis name '{0}' is used twice (also axes[{1}]); axis "
                   "names must be unique",
                   name, it->second));
  }
  bool sizesOk = true;
  for (size_t i = 0; i < mesh.shape.size(); ++i)
    if (mesh.shape[i] <= 0) {
      fail(at(path, "shape", i),
           formatv("mesh axis size {0} must be positive", mesh.shape[i]));
      sizesOk = false;
    }
  if (!sizesOk)
    return errors.take();
  int64_t n = mesh.numDevices();
  if (n < 0 || n > kMaxMeshDevices) {
    fail(at(path, "shape"),
         formatv("the mesh has more than {0} devices", kMaxMeshDevices));
    return errors.take();
  }
  if (static_cast<int64_t>(mesh.ranks.size()) != n) {
    fail(at(path, "ranks"),
         formatv("the mesh shape has {0} device(s) but {1} rank(s) are listed; "
                 "list one global rank per device in row-major order",
                 n, mesh.ranks.size()));
    return errors.take();
  }
  llvm::DenseMap<int64_t, size_t> rankAt;
  for (size_t i = 0; i < mesh.ranks.size(); ++i) {
    int64_t r = mesh.ranks[i];
    if (r < 0 || r > kMaxRank) {
      fail(at(path, "ranks", i),
           formatv("rank {0} is out of range; ranks must be in [0, {1}] "
                   "(the communicator, largest rank + 1, is a C int)",
                   r, kMaxRank));
      continue;
    }
    auto [it, inserted] = rankAt.try_emplace(r, i);
    if (!inserted)
      fail(at(path, "ranks", i),
           formatv("rank {0} appears twice (also ranks[{1}]); a device "
                   "belongs to a mesh once",
                   r, it->second));
  }
  return errors.take();
}

llvm::Error reshard::verifyTopology(const TopologySpec &topo,
                                    const std::string &path) {
  ErrorList errors;
  auto fail = [&](const std::string &field, const std::string &msg) {
    errors.add(at(path, field), msg);
  };
  if (topo.gpusPerNode <= 0)
    fail("gpus_per_node",
         formatv("GPUs per node must be positive, got {0}", topo.gpusPerNode));
  if (topo.nvlDomainSize <= 0)
    fail("nvl_domain_size", formatv("NVLink domain size must be positive, "
                                    "got {0}",
                                    topo.nvlDomainSize));
  if (topo.gpusPerNode > 0 && topo.nvlDomainSize > 0 &&
      topo.nvlDomainSize % topo.gpusPerNode != 0)
    fail("nvl_domain_size",
         formatv("NVLink domain size {0} is not a multiple of gpus_per_node "
                 "{1}; a domain holds whole nodes",
                 topo.nvlDomainSize, topo.gpusPerNode));
  auto positive = [&](const char *field, double v) {
    if (!(v > 0) || !std::isfinite(v))
      fail(field, "bandwidth must be positive and finite, got " + fmtDouble(v));
    else if (v < kMinBandwidthGBps || v > kMaxBandwidthGBps)
      fail(field, formatv("bandwidth {0} GB/s is outside [{1}, {2}] GB/s, "
                          "where the cost model's times stay finite",
                          fmtDouble(v), fmtDouble(kMinBandwidthGBps),
                          fmtDouble(kMaxBandwidthGBps)));
  };
  positive("nvlink_GBps_per_gpu", topo.nvlinkGBps);
  positive("nic_GBps_per_gpu", topo.nicGBps);
  auto nonNegative = [&](const char *field, double v) {
    if (!(v >= 0) || !std::isfinite(v))
      fail(field,
           "latency must be non-negative and finite, got " + fmtDouble(v));
    else if (v != 0 && (v < kMinLatencyUs || v > kMaxLatencyUs))
      fail(field, formatv("latency {0} us is neither 0 nor in [{1}, {2}] "
                          "us, where the cost model's times stay finite",
                          fmtDouble(v), fmtDouble(kMinLatencyUs),
                          fmtDouble(kMaxLatencyUs)));
  };
  nonNegative("nvlink_latency_us", topo.nvlinkLatencyUs);
  nonNegative("nic_latency_us", topo.nicLatencyUs);
  return errors.take();
}

llvm::Error reshard::verifyTensorShape(llvm::ArrayRef<int64_t> shape,
                                       int64_t elementBytes,
                                       const std::string &path) {
  ErrorList errors;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] < 0)
      errors.add(at(path, "shape", i),
                 formatv("dim size {0} must be non-negative", shape[i]));
  if (!errors.empty())
    return errors.take();
  // Zero dims are skipped so that the rule does not depend on dim order:
  // every stride of the row-major layout must fit too.
  std::optional<int64_t> bytes = elementBytes;
  for (int64_t d : shape)
    if (d != 0 && !(bytes = llvm::checkedMul(*bytes, d))) {
      errors.add(at(path, "shape"),
                 "the tensor's byte size (product of its non-zero dims "
                 "times the element size) overflows 64 bits; it must stay "
                 "below 2^63 bytes");
      break;
    }
  return errors.take();
}

/// Checks a dim's storage order (runs in stored order) and returns it
/// canonical: empty runs dropped, runs that continue each other merged, and
/// nothing left for the logical order.
static llvm::SmallVector<OrderRun> resolveOrder(
    llvm::ArrayRef<OrderRun> runs, int64_t n, size_t dim,
    const std::string &path,
    llvm::function_ref<void(const std::string &, const std::string &)> diag) {
  auto runPath = [&](size_t k) { return formatv("{0}[{1}]", path, k).str(); };
  // Non-empty runs by start, to find overlaps and gaps.
  llvm::SmallVector<size_t> byStart;
  bool ok = true;
  for (size_t k = 0; k < runs.size(); ++k) {
    const OrderRun &r = runs[k];
    if (r.length == 0)
      continue;
    std::optional<int64_t> end = llvm::checkedAdd(r.start, r.length);
    if (r.start < 0 || r.length < 0 || !end || *end > n) {
      diag(runPath(k),
           formatv("run [{0}, {1}] is outside dim {2} of size {3}; a run "
                   "[start, length] needs 0 <= start and start + length <= "
                   "{3}",
                   r.start, r.length, dim, n));
      ok = false;
      continue;
    }
    byStart.push_back(k);
  }
  if (!ok)
    return {};
  llvm::sort(byStart,
             [&](size_t a, size_t b) { return runs[a].start < runs[b].start; });
  int64_t covered = 0; // [0, covered) is covered by the runs seen so far
  for (size_t k : byStart) {
    const OrderRun &r = runs[k];
    if (r.start < covered) {
      size_t other = 0;
      for (size_t j : byStart)
        if (j != k && runs[j].start <= r.start &&
            r.start < runs[j].start + runs[j].length)
          other = j;
      diag(runPath(k), formatv("run [{0}, {1}] overlaps run {2} [{3}, {4}] "
                               "of dim {5}; runs must not overlap",
                               r.start, r.length, other, runs[other].start,
                               runs[other].length, dim));
      return {};
    }
    if (r.start > covered) {
      diag(path, formatv("no run covers indices [{0}, {1}) of dim {2}; the "
                         "runs must cover [0, {3}) exactly",
                         covered, r.start, dim, n));
      return {};
    }
    covered = r.start + r.length;
  }
  if (covered != n) {
    diag(path, formatv("no run covers indices [{0}, {1}) of dim {2}; the "
                       "runs must cover [0, {1}) exactly",
                       covered, n, dim));
    return {};
  }
  llvm::SmallVector<OrderRun> canonical;
  for (const OrderRun &r : runs) {
    if (r.length == 0)
      continue;
    if (!canonical.empty() &&
        canonical.back().start + canonical.back().length == r.start)
      canonical.back().length += r.length;
    else
      canonical.push_back(r);
  }
  if (canonical.size() == 1)
    canonical.clear(); // one run covering the dim: the logical order
  return canonical;
}

llvm::Expected<Sharding> reshard::resolveSharding(
    const ShardingSpec &spec, llvm::ArrayRef<std::string> meshAxes,
    llvm::ArrayRef<int64_t> shape, const std::string &path) {
  ErrorList errors;
  auto diag = [&](const std::string &where, const std::string &msg) {
    errors.add(where, msg);
  };
  if (spec.dims.size() != shape.size()) {
    diag(at(path, "dims"),
         formatv("the sharding has {0} dims but the tensor has rank {1}; give "
                 "one list of mesh axes per tensor dim",
                 spec.dims.size(), shape.size()));
    return errors.take();
  }
  Sharding out;
  llvm::DenseMap<unsigned, size_t> usedBy; // mesh axis -> tensor dim
  for (size_t d = 0; d < spec.dims.size(); ++d) {
    const DimShardingSpec &dimSpec = spec.dims[d];
    DimSharding dim;
    // Paths are built only for errors: this runs for every tensor.
    auto dimPath = [&] { return at(path, "dims", d); };
    for (size_t j = 0; j < dimSpec.axes.size(); ++j) {
      const std::string &name = dimSpec.axes[j];
      std::optional<unsigned> axis;
      for (unsigned i = 0, e = meshAxes.size(); i < e; ++i)
        if (meshAxes[i] == name)
          axis = i;
      if (!axis) {
        std::string known;
        for (const std::string &a : meshAxes)
          known += (known.empty() ? "" : ", ") + a;
        diag(formatv("{0}[{1}]", dimPath(), j).str(),
             formatv("axis '{0}' is not an axis of the mesh (its axes: {1})",
                     name, known.empty() ? "none" : known));
        continue;
      }
      auto [it, inserted] = usedBy.try_emplace(*axis, d);
      if (!inserted) {
        std::string also =
            it->second == d
                ? formatv("twice in dim {0}", d).str()
                : formatv("twice (also by dim {0})", it->second).str();
        diag(formatv("{0}[{1}]", dimPath(), j).str(),
             formatv("mesh axis '{0}' is used {1}; an axis shards at most "
                     "one dim, once",
                     name, also));
        continue;
      }
      dim.axes.push_back(*axis);
    }
    if (!dimSpec.blocks.empty()) {
      auto blocksPath = [&] {
        return at(path, formatv("blocks.{0}", d).str());
      };
      std::optional<int64_t> sum = 0; // std::nullopt once it overflows
      bool blocksOk = true;
      for (size_t b = 0; b < dimSpec.blocks.size(); ++b) {
        int64_t size = dimSpec.blocks[b];
        if (size < 0) {
          diag(formatv("{0}[{1}]", blocksPath(), b).str(),
               formatv("block size {0} must be non-negative", size));
          blocksOk = false;
        } else if (sum) {
          sum = llvm::checkedAdd(*sum, size);
        }
      }
      if (blocksOk && sum != shape[d])
        diag(blocksPath(),
             formatv("blocks sum to {0} but dim {1} has size {2}; blocks "
                     "must add up to the dim",
                     sum ? std::to_string(*sum) : std::string("at least 2^63"),
                     d, shape[d]));
      dim.blocks = dimSpec.blocks;
    }
    if (!dimSpec.order.empty())
      dim.order = resolveOrder(dimSpec.order, shape[d], d,
                               at(path, formatv("order.{0}", d).str()), diag);
    out.dims.push_back(std::move(dim));
  }
  if (spec.dimOrderGiven || !spec.dimOrder.empty()) {
    if (!isPermutation(spec.dimOrder, shape.size())) {
      std::string got;
      for (int64_t d : spec.dimOrder)
        got += (got.empty() ? "" : ", ") + std::to_string(d);
      diag(at(path, "dim_order"),
           formatv("[{0}] is not a permutation of the tensor's {1} dim(s); "
                   "list every dim 0..{2} once, outermost first",
                   got, shape.size(), int64_t(shape.size()) - 1));
    } else if (!llvm::equal(spec.dimOrder,
                            llvm::seq<int64_t>(0, shape.size()))) {
      out.dimOrder = spec.dimOrder;
    }
  }
  const QuantSpec &q = spec.quant;
  if (q.kind == QuantSpec::Block) {
    if (shape.empty())
      diag(at(path, "quant.block"),
           "a 0-D tensor has no dims to cut into blocks; quantize tensors "
           "of rank 1 or more");
    else if (q.block.size() != shape.size())
      diag(at(path, "quant.block"),
           formatv("{0} block size(s) for a tensor of rank {1}; give one "
                   "block size per dim",
                   q.block.size(), shape.size()));
    for (size_t d = 0; d < q.block.size(); ++d)
      if (q.block[d] < 1)
        diag(at(path, "quant.block", d),
             formatv("block size {0} must be at least 1", q.block[d]));
  } else if (q.kind == QuantSpec::Mx) {
    if (q.mx != kMxBlock)
      diag(at(path, "quant.mx"),
           formatv("MXFP8 blocks are {0} elements of the last dim, got {1}",
                   kMxBlock, q.mx));
    if (shape.empty())
      diag(at(path, "quant.mx"),
           "a 0-D tensor has no last dim to cut into MXFP8 blocks; quantize "
           "tensors of rank 1 or more");
  }
  if (!q.empty())
    for (size_t d = 0; d < spec.dims.size(); ++d)
      if (!spec.dims[d].order.empty())
        diag(at(path, formatv("order.{0}", d).str()),
             "a quantized side cannot have a storage order; store the dim "
             "in logical order");
  if (!q.empty() && !out.dimOrder.empty())
    diag(at(path, "dim_order"),
         "a quantized side cannot store its dims in another order; store "
         "them row-major in logical order");
  out.quant = q;
  if (!errors.empty())
    return errors.take();
  return out;
}

bool reshard::isPermutation(llvm::ArrayRef<int64_t> order, size_t rank) {
  if (order.size() != rank)
    return false;
  llvm::SmallVector<bool> seen(rank, false);
  for (int64_t d : order) {
    if (d < 0 || d >= static_cast<int64_t>(rank) || seen[d])
      return false;
    seen[d] = true;
  }
  return true;
}

llvm::SmallVector<int64_t>
reshard::storedShape(llvm::ArrayRef<int64_t> localShape,
                     llvm::ArrayRef<int64_t> dimOrder) {
  if (dimOrder.empty())
    return llvm::SmallVector<int64_t>(localShape);
  llvm::SmallVector<int64_t> out;
  for (int64_t d : dimOrder)
    out.push_back(localShape[d]);
  return out;
}

llvm::SmallVector<int64_t>
reshard::storedStrides(llvm::ArrayRef<int64_t> localShape,
                       llvm::ArrayRef<int64_t> dimOrder) {
  size_t rank = localShape.size();
  llvm::SmallVector<int64_t> strides(rank);
  int64_t s = 1;
  for (size_t k = rank; k-- > 0;) {
    size_t d = dimOrder.empty() ? k : dimOrder[k];
    strides[d] = s;
    s *= localShape[d]; // the shard's element count fits in int64_t
  }
  return strides;
}

namespace {
struct DtypeInfo {
  llvm::StringRef name;
  int64_t bytes;
};
} // namespace

static const DtypeInfo kDtypes[] = {
    {"bf16", 2},  {"fp16", 2},   {"fp32", 4},    {"fp64", 8},   {"int8", 1},
    {"uint8", 1}, {"int16", 2},  {"uint16", 2},  {"int32", 4},  {"uint32", 4},
    {"int64", 8}, {"uint64", 8}, {"fp8e4m3", 1}, {"fp8e5m2", 1}};

std::optional<int64_t> reshard::dtypeBytes(llvm::StringRef dtype) {
  for (const DtypeInfo &d : kDtypes)
    if (d.name == dtype)
      return d.bytes;
  return std::nullopt;
}

llvm::ArrayRef<llvm::StringRef> reshard::dtypeNames() {
  static const llvm::SmallVector<llvm::StringRef> names = [] {
    llvm::SmallVector<llvm::StringRef> n;
    for (const DtypeInfo &d : kDtypes)
      n.push_back(d.name);
    return n;
  }();
  return names;
}
