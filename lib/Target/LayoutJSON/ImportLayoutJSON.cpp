//===- ImportLayoutJSON.cpp - Layout interchange JSON to the dialect ------===//
//
// Reads the JSON, checks it with the same reshard/Layout checks the verifier
// uses (so errors carry JSON paths instead of op names), then builds the ops.
//
//===----------------------------------------------------------------------===//
#include "reshard/Target/LayoutJSON/ImportLayoutJSON.h"

#include "JsonReader.h"
#include "reshard/Dialect/Reshard/IR/ReshardOps.h"
#include "reshard/Layout/Quant.h"

#include "reshard/Support/InputFiles.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace reshard;
using JValue = json::Value;
using Kind = json::Value::Kind;

namespace {

/// A checked tensor entry, ready to become a reshard.redistribute.
struct TensorEntry {
  size_t offset;
  std::string name;
  SmallVector<int64_t> shape;
  std::string dtype;
  std::string srcMesh, dstMesh;
  ShardingSpec src, dst;
};

class Importer {
public:
  Importer(llvm::SourceMgr &sm, MLIRContext *ctx) : sm(sm), ctx(ctx) {
    const llvm::MemoryBuffer *buf = sm.getMemoryBuffer(sm.getMainFileID());
    text = buf->getBuffer();
    fileName = buf->getBufferIdentifier();
  }

  OwningOpRef<ModuleOp> run();

private:
  /// Line and column from a table of line starts: SourceMgr finds columns
  /// by scanning back to the line start, which is quadratic on the one-line
  /// JSON that json.dump writes by default.
  Location locAt(size_t offset) {
    offset = std::min(offset, text.size());
    if (lineStarts.empty()) {
      lineStarts.push_back(0);
      for (size_t i = 0; i < text.size(); ++i)
        if (text[i] == '\n')
          lineStarts.push_back(i + 1);
    }
    auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
    size_t line = it - lineStarts.begin();
    return FileLineColLoc::get(ctx, fileName, line, offset - *(it - 1) + 1);
  }
  std::vector<size_t> lineStarts;
  bool error(const JValue &v, const std::string &path, const Twine &msg) {
    emitError(locAt(v.offset)) << path << ": " << msg;
    return false;
  }

  // Typed field access; each reports a missing field or a wrong type.
  const JValue *field(const JValue &obj, const std::string &path, StringRef key,
                      bool required = true);
  bool expectKind(const JValue &v, const std::string &path, Kind kind,
                  const char *what);
  bool readInt(const JValue &v, const std::string &path, int64_t &out);
  bool readNumber(const JValue &v, const std::string &path, double &out);
  bool readString(const JValue &v, const std::string &path, std::string &out);
  bool readIntList(const JValue &v, const std::string &path,
                   SmallVectorImpl<int64_t> &out);
  bool readStringList(const JValue &v, const std::string &path,
                      SmallVectorImpl<std::string> &out);

  bool readMesh(const JValue &v, const std::string &path, MeshSpec &mesh);
  bool readTopology(const JValue &v, const std::string &path,
                    TopologySpec &topo);
  bool readSharding(const JValue &v, const std::string &path, StringRef tensor,
                    ArrayRef<int64_t> shape, std::string &meshName,
                    ShardingSpec &spec);
  bool readQuant(const JValue &v, const std::string &path, QuantSpec &quant);
  bool readTensor(const JValue &v, const std::string &path, TensorEntry &t);

  /// Reports the shared layout checks' findings, which carry paths that
  /// start with `basePath` (the path of `base`), as errors at the value each
  /// path names. Returns whether there were none.
  bool report(llvm::Error err, const JValue &base, const std::string &basePath,
              StringRef tensor = "");
  const JValue &resolve(const JValue &base, StringRef rest);

  llvm::SourceMgr &sm;
  MLIRContext *ctx;
  StringRef text;
  std::string fileName;
  llvm::StringMap<MeshSpec> meshes;
};

} // namespace

/// Paths are made for every element read (an error may name them), so
/// by concatenation: formatv parses its format string on each call.
static std::string indexPath(const std::string &path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
/// `path.key`, or `path["key"]` when the key is empty or not a plain word
/// (mesh names may contain dots).
static std::string keyPath(const std::string &path, StringRef key) {
  bool plain = !key.empty() && llvm::all_of(key, [](char c) {
    return llvm::isAlnum(c) || c == '_';
  });
  if (!plain)
    return path + "[\"" + key.str() + "\"]";
  return path.empty() ? key.str() : path + "." + key.str();
}

/// Follows `.key`, `["key"]` and `[i]` segments from `base` as far as the
/// document goes, so an error points at the value its path names.
const JValue &Importer::resolve(const JValue &base, StringRef rest) {
  const JValue *cur = &base;
  while (!rest.empty()) {
    const JValue *next = nullptr;
    if (rest.consume_front("[\"")) {
      size_t end = rest.find("\"]");
      if (end == StringRef::npos)
        break;
      next = cur->find(rest.take_front(end));
      rest = rest.drop_front(end + 2);
    } else if (rest.consume_front("[")) {
      size_t end = rest.find(']');
      unsigned long long i;
      if (end == StringRef::npos || rest.take_front(end).getAsInteger(10, i))
        break;
      if (cur->kind == Kind::Array && i < cur->elements.size())
        next = &cur->elements[i];
      rest = rest.drop_front(end + 1);
    } else if (rest.consume_front(".")) {
      size_t end = rest.find_first_of(".[");
      next = cur->find(rest.take_front(end));
      rest = end == StringRef::npos ? StringRef() : rest.drop_front(end);
    } else {
      break;
    }
    if (!next)
      break;
    cur = next;
  }
  return *cur;
}

bool Importer::report(llvm::Error err, const JValue &base,
                      const std::string &basePath, StringRef tensor) {
  bool ok = true;
  forEachLayoutError(std::move(err), [&](const LayoutError &e) {
    StringRef rest(e.getPath());
    if (!rest.consume_front(basePath))
      rest = "";
    if (tensor.empty())
      error(resolve(base, rest), e.getPath(), e.getMessage());
    else
      error(resolve(base, rest), e.getPath(),
            e.getMessage() + " (tensor '" + tensor + "')");
    ok = false;
  });
  return ok;
}

const JValue *Importer::field(const JValue &obj, const std::string &path,
                              StringRef key, bool required) {
  const JValue *v = obj.find(key);
  if (!v && required)
    error(obj, path, llvm::formatv("missing required field '{0}'", key).str());
  return v;
}

bool Importer::expectKind(const JValue &v, const std::string &path, Kind kind,
                          const char *what) {
  if (v.kind == kind)
    return true;
  return error(
      v, path,
      llvm::formatv("expected {0}, got {1}", what, v.describe()).str());
}

bool Importer::readInt(const JValue &v, const std::string &path, int64_t &out) {
  if (v.kind == Kind::Number)
    return error(v, path,
                 v.integralLiteral
                     ? "integer does not fit in 64 bits"
                     : "expected an integer, got a number with a fraction or "
                       "an exponent");
  if (!expectKind(v, path, Kind::Integer, "an integer"))
    return false;
  out = v.integer;
  return true;
}

bool Importer::readNumber(const JValue &v, const std::string &path,
                          double &out) {
  if (v.kind == Kind::Integer) {
    out = static_cast<double>(v.integer);
    return true;
  }
  if (!expectKind(v, path, Kind::Number, "a number"))
    return false;
  out = v.number;
  return true;
}

bool Importer::readString(const JValue &v, const std::string &path,
                          std::string &out) {
  if (!expectKind(v, path, Kind::String, "a string"))
    return false;
  out = v.string;
  return true;
}

bool Importer::readIntList(const JValue &v, const std::string &path,
                           SmallVectorImpl<int64_t> &out) {
  if (!expectKind(v, path, Kind::Array, "an array of integers"))
    return false;
  out.reserve(v.elements.size());
  for (auto [i, e] : llvm::enumerate(v.elements)) {
    int64_t x;
    if (!readInt(e, indexPath(path, i), x))
      return false;
    out.push_back(x);
  }
  return true;
}

bool Importer::readStringList(const JValue &v, const std::string &path,
                              SmallVectorImpl<std::string> &out) {
  if (!expectKind(v, path, Kind::Array, "an array of strings"))
    return false;
  for (auto [i, e] : llvm::enumerate(v.elements)) {
    std::string s;
    if (!readString(e, indexPath(path, i), s))
      return false;
    out.push_back(std::move(s));
  }
  return true;
}

bool Importer::readMesh(const JValue &v, const std::string &path,
                        MeshSpec &mesh) {
  if (!expectKind(v, path, Kind::Object, "a mesh object"))
    return false;
  const JValue *shape = field(v, path, "shape");
  const JValue *axes = field(v, path, "axes");
  const JValue *ranks = field(v, path, "ranks");
  if (!shape || !axes || !ranks ||
      !readIntList(*shape, keyPath(path, "shape"), mesh.shape) ||
      !readStringList(*axes, keyPath(path, "axes"), mesh.axes) ||
      !readIntList(*ranks, keyPath(path, "ranks"), mesh.ranks))
    return false;
  return report(verifyMesh(mesh, path), v, path);
}

bool Importer::readTopology(const JValue &v, const std::string &path,
                            TopologySpec &topo) {
  if (!expectKind(v, path, Kind::Object, "a topology object"))
    return false;
  auto readIntField = [&](StringRef key, int64_t &out) {
    const JValue *f = field(v, path, key);
    return f && readInt(*f, keyPath(path, key), out);
  };
  auto readNumField = [&](StringRef key, double &out, bool required) {
    const JValue *f = field(v, path, key, required);
    if (!f)
      return !required;
    return readNumber(*f, keyPath(path, key), out);
  };
  if (!readIntField("gpus_per_node", topo.gpusPerNode) ||
      !readIntField("nvl_domain_size", topo.nvlDomainSize) ||
      !readNumField("nvlink_GBps_per_gpu", topo.nvlinkGBps, true) ||
      !readNumField("nic_GBps_per_gpu", topo.nicGBps, true) ||
      !readNumField("nvlink_latency_us", topo.nvlinkLatencyUs, false) ||
      !readNumField("nic_latency_us", topo.nicLatencyUs, false))
    return false;
  return report(verifyTopology(topo, path), v, path);
}

bool Importer::readSharding(const JValue &v, const std::string &path,
                            StringRef tensor, ArrayRef<int64_t> shape,
                            std::string &meshName, ShardingSpec &spec) {
  size_t rank = shape.size();
  // What a blocks or order entry gets wrong names the tensor too.
  auto named = [&](const Twine &msg) {
    return (msg + " (tensor '" + tensor + "')").str();
  };
  if (!expectKind(v, path, Kind::Object, "a sharding object"))
    return false;
  const JValue *mesh = field(v, path, "mesh");
  const JValue *dims = field(v, path, "dims");
  if (!mesh || !dims || !readString(*mesh, keyPath(path, "mesh"), meshName))
    return false;
  if (!meshes.count(meshName))
    return error(
        *mesh, keyPath(path, "mesh"),
        llvm::formatv("unknown mesh '{0}'; declare it under 'meshes'", meshName)
            .str());
  std::string dimsPath = keyPath(path, "dims");
  if (!expectKind(*dims, dimsPath, Kind::Array, "an array (one per dim)"))
    return false;
  for (auto [i, d] : llvm::enumerate(dims->elements)) {
    DimShardingSpec dim;
    if (!readStringList(d, indexPath(dimsPath, i), dim.axes))
      return false;
    spec.dims.push_back(std::move(dim));
  }
  // `blocks` and `order` map tensor dim indices ("0", "1", ...) to lists.
  size_t entryDim = 0; // the dim of the entry being read
  auto forEachDim =
      [&](StringRef key, StringRef noun, StringRef what,
          llvm::function_ref<bool(const JValue &, const std::string &,
                                  DimShardingSpec &)>
              readEntry) {
        const JValue *obj = field(v, path, key, /*required=*/false);
        if (!obj)
          return true;
        std::string objPath = keyPath(path, key);
        std::string expected =
            ("an object mapping dim indices to " + what).str();
        if (!expectKind(*obj, objPath, Kind::Object, expected.c_str()))
          return false;
        for (const auto &[dimKey, entry] : obj->members) {
          std::string entryPath = keyPath(objPath, dimKey);
          unsigned long long dim;
          if (StringRef(dimKey).getAsInteger(10, dim) || dimKey.empty() ||
              !llvm::all_of(dimKey,
                            [](char c) { return c >= '0' && c <= '9'; }) ||
              (dimKey.size() > 1 && dimKey[0] == '0'))
            return error(entry, entryPath,
                         llvm::formatv("{0} keys must be tensor dim indices "
                                       "written in decimal without leading "
                                       "zeros, such as \"0\"",
                                       noun)
                             .str());
          if (dim >= rank)
            return error(entry, entryPath,
                         named(llvm::formatv("{0} for dim {1}, but the tensor "
                                             "has rank {2}",
                                             key, dimKey, rank)));
          if (dim >= spec.dims.size())
            continue; // the dims count mismatch is reported by resolveSharding
          entryDim = dim;
          if (!readEntry(entry, entryPath, spec.dims[dim]))
            return false;
        }
        return true;
      };
  auto readBlocks = [&](const JValue &sizes, const std::string &entryPath,
                        DimShardingSpec &dim) {
    SmallVector<int64_t> list;
    if (!readIntList(sizes, entryPath, list))
      return false;
    if (list.empty())
      return error(sizes, entryPath, named("blocks need at least one size"));
    dim.blocks.assign(list.begin(), list.end());
    return true;
  };
  auto readOrder = [&](const JValue &runs, const std::string &entryPath,
                       DimShardingSpec &dim) {
    if (!expectKind(runs, entryPath, Kind::Array,
                    "an array of [start, length] runs"))
      return false;
    // No run covers [0, 0) exactly: a zero-size dim's order may be empty
    // (the logical order, as no order).
    if (runs.elements.empty() && shape[entryDim] != 0)
      return error(runs, entryPath,
                   named(llvm::formatv("an order needs at least one run (dim "
                                       "{0} has size {1})",
                                       entryDim, shape[entryDim])));
    for (auto [k, run] : llvm::enumerate(runs.elements)) {
      std::string runPath = indexPath(entryPath, k);
      SmallVector<int64_t> pair;
      if (!readIntList(run, runPath, pair))
        return false;
      if (pair.size() != 2)
        return error(run, runPath,
                     named(llvm::formatv("a run is [start, length], got {0} "
                                         "number(s)",
                                         pair.size())));
      dim.order.push_back({pair[0], pair[1]});
    }
    return true;
  };
  if (!forEachDim("blocks", "block", "block sizes", readBlocks) ||
      !forEachDim("order", "order", "storage orders", readOrder))
    return false;
  // The permutation itself is checked by resolveSharding, which knows the
  // rank.
  const JValue *dimOrder = field(v, path, "dim_order", /*required=*/false);
  if (dimOrder &&
      !readIntList(*dimOrder, keyPath(path, "dim_order"), spec.dimOrder))
    return false;
  spec.dimOrderGiven = dimOrder != nullptr;
  const JValue *quant = field(v, path, "quant", /*required=*/false);
  return !quant || readQuant(*quant, keyPath(path, "quant"), spec.quant);
}

/// `{"block": [b0, ...]}` (with `"scale_fmt": "ue8m0"` or `"fp32"`) or
/// `{"mx": 32}`; the sizes are checked by resolveSharding, which knows the
/// rank.
bool Importer::readQuant(const JValue &v, const std::string &path,
                         QuantSpec &quant) {
  if (!expectKind(v, path, Kind::Object,
                  "an object: {\"block\": [sizes]} or {\"mx\": 32}"))
    return false;
  const JValue *scaleFmt = nullptr;
  for (const auto &[key, value] : v.members) {
    std::string keyAt = keyPath(path, key);
    bool known = key == "block" || key == "mx";
    if (known && !quant.empty())
      return error(value, keyAt, "give one of 'block' and 'mx', not both");
    if (key == "scale_fmt") {
      if (!expectKind(value, keyAt, Kind::String,
                      "a string: \"ue8m0\" or \"fp32\""))
        return false;
      if (value.string != "ue8m0" && value.string != "fp32")
        return error(value, keyAt,
                     llvm::formatv("unknown scale format '{0}'; use \"ue8m0\" "
                                   "(power-of-two fp32 scales) or \"fp32\"",
                                   value.string)
                         .str());
      scaleFmt = &value;
      quant.ue8m0 = value.string == "ue8m0";
    } else if (key == "block") {
      quant.kind = QuantSpec::Block;
      if (!readIntList(value, keyAt, quant.block))
        return false;
    } else if (key == "mx") {
      quant.kind = QuantSpec::Mx;
      if (!readInt(value, keyAt, quant.mx))
        return false;
    } else {
      return error(value, keyAt,
                   llvm::formatv("unknown quantization '{0}'; use 'block' "
                                 "(FP8 with fp32 scales per block) or 'mx' "
                                 "(MXFP8)",
                                 key)
                       .str());
    }
  }
  if (quant.empty())
    return error(v, path,
                 "an empty quantization; give 'block' (a size per dim) or "
                 "'mx' (32)");
  if (scaleFmt && quant.kind != QuantSpec::Block)
    return error(*scaleFmt, keyPath(path, "scale_fmt"),
                 "'scale_fmt' applies to 'block' only; MXFP8's scales are "
                 "always E8M0 bytes");
  return true;
}

bool Importer::readTensor(const JValue &v, const std::string &path,
                          TensorEntry &t) {
  if (!expectKind(v, path, Kind::Object, "a tensor object"))
    return false;
  t.offset = v.offset;
  const JValue *name = field(v, path, "name");
  const JValue *shape = field(v, path, "shape");
  const JValue *dtype = field(v, path, "dtype");
  const JValue *src = field(v, path, "src");
  const JValue *dst = field(v, path, "dst");
  if (!name || !shape || !dtype || !src || !dst ||
      !readString(*name, keyPath(path, "name"), t.name) ||
      !readIntList(*shape, keyPath(path, "shape"), t.shape) ||
      !readString(*dtype, keyPath(path, "dtype"), t.dtype))
    return false;
  if (t.name.empty())
    return error(*name, keyPath(path, "name"), "tensor name is empty");
  // Generated plans hand names to C as NUL-terminated strings.
  if (t.name.find('\0') != std::string::npos)
    return error(*name, keyPath(path, "name"),
                 "tensor name contains a NUL character; C callers would "
                 "see it cut short");
  std::optional<int64_t> bytes = dtypeBytes(t.dtype);
  if (!bytes)
    return error(*dtype, keyPath(path, "dtype"),
                 llvm::formatv("unknown dtype '{0}'; use one of: {1}", t.dtype,
                               llvm::join(dtypeNames(), ", "))
                     .str());
  if (!report(verifyTensorShape(t.shape, *bytes, path), v, path))
    return false;
  std::string srcPath = keyPath(path, "src"), dstPath = keyPath(path, "dst");
  if (!readSharding(*src, srcPath, t.name, t.shape, t.srcMesh, t.src) ||
      !readSharding(*dst, dstPath, t.name, t.shape, t.dstMesh, t.dst))
    return false;
  if (!t.src.quant.empty())
    return error(*src->find("quant"), keyPath(srcPath, "quant"),
                 "only a destination can be quantized; move 'quant' to "
                 "'dst'");
  bool ok =
      report(resolveSharding(t.src, meshes[t.srcMesh].axes, t.shape, srcPath)
                 .takeError(),
             *src, srcPath, t.name);
  const MeshSpec &dstMesh = meshes[t.dstMesh];
  llvm::Expected<Sharding> dstSharding =
      resolveSharding(t.dst, dstMesh.axes, t.shape, dstPath);
  if (!dstSharding) {
    report(dstSharding.takeError(), *dst, dstPath, t.name);
    return false;
  }
  ok &= report(verifyQuantizedSide(*dstSharding, dstMesh.shape, dstMesh.axes,
                                   t.shape, t.dtype, dstPath),
               v, path, t.name);
  return ok;
}

OwningOpRef<ModuleOp> Importer::run() {
  JValue root;
  json::ParseError parseError;
  if (!json::parse(text, root, parseError)) {
    emitError(locAt(parseError.offset))
        << "invalid JSON: " << parseError.message;
    return nullptr;
  }
  if (!expectKind(root, "(root)", Kind::Object, "an object"))
    return nullptr;

  const JValue *meshesValue = field(root, "(root)", "meshes");
  const JValue *tensorsValue = field(root, "(root)", "tensors");
  if (!meshesValue || !tensorsValue ||
      !expectKind(*meshesValue, "meshes", Kind::Object,
                  "an object of named meshes") ||
      !expectKind(*tensorsValue, "tensors", Kind::Array, "an array of tensors"))
    return nullptr;

  SmallVector<std::pair<std::string, size_t>> meshOrder; // name, offset
  for (const auto &[name, meshValue] : meshesValue->members) {
    std::string path = keyPath("meshes", name);
    if (name.empty()) {
      error(meshValue, path, "mesh name is empty");
      return nullptr;
    }
    if (name.find('\0') != std::string::npos) {
      std::string shown; // escaped: a message holds no NUL
      llvm::raw_string_ostream os(shown);
      llvm::printEscapedString(name, os);
      error(meshValue, "meshes",
            llvm::formatv("mesh name \"{0}\" contains a NUL character", shown));
      return nullptr;
    }
    MeshSpec mesh;
    if (!readMesh(meshValue, path, mesh))
      return nullptr;
    meshes[name] = std::move(mesh);
    meshOrder.push_back({name, meshValue.offset});
  }

  std::optional<TopologySpec> topology;
  if (const JValue *topoValue = field(root, "(root)", "topology", false)) {
    TopologySpec topo;
    if (!readTopology(*topoValue, "topology", topo))
      return nullptr;
    topology = topo;
  }

  std::vector<TensorEntry> tensors(tensorsValue->elements.size());
  llvm::StringMap<size_t> tensorIndex;
  bool ok = true;
  for (auto [i, t] : llvm::enumerate(tensorsValue->elements)) {
    std::string path = indexPath("tensors", i);
    if (!readTensor(t, path, tensors[i])) {
      ok = false;
      continue;
    }
    const std::string &name = tensors[i].name;
    auto [it, inserted] = tensorIndex.try_emplace(name, i);
    if (!inserted) {
      ok = error(*t.find("name"), keyPath(path, "name"),
                 llvm::formatv("tensor name '{0}' is used twice (also "
                               "tensors[{1}]); names must be unique",
                               name, it->second)
                     .str());
    } else if (meshes.count(name)) {
      ok = error(*t.find("name"), keyPath(path, "name"),
                 llvm::formatv("tensor name '{0}' is also a mesh name; "
                               "tensors and meshes share one namespace",
                               name)
                     .str());
    }
  }
  // A quantized tensor's scales travel as `<name>.scale`.
  for (auto [i, t] : llvm::enumerate(tensors)) {
    if (t.dst.quant.empty())
      continue;
    auto it = tensorIndex.find(t.name + ".scale");
    if (it != tensorIndex.end()) {
      const JValue &other = tensorsValue->elements[it->second];
      ok = error(*other.find("name"),
                 keyPath(indexPath("tensors", it->second), "name"),
                 llvm::formatv("tensor name '{0}' is taken by the scales of "
                               "the quantized tensor '{1}' (tensors[{2}]); "
                               "rename one",
                               it->first(), t.name, i)
                     .str());
    }
  }
  if (!ok)
    return nullptr;

  // The topology symbol takes the first name that no mesh or tensor uses.
  std::string topoName = "topology";
  for (int n = 0; meshes.count(topoName) || tensorIndex.count(topoName); ++n)
    topoName = llvm::formatv("topology_{0}", n).str();

  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(locAt(0));
  b.setInsertionPointToEnd(module->getBody());
  for (const auto &[name, offset] : meshOrder) {
    const MeshSpec &mesh = meshes[name];
    MeshOp::create(b, locAt(offset), name, mesh.shape,
                   b.getStrArrayAttr(SmallVector<StringRef>(mesh.axes.begin(),
                                                            mesh.axes.end())),
                   mesh.ranks);
  }
  FlatSymbolRefAttr topoRef;
  if (topology) {
    TopologyOp::create(b, locAt(root.find("topology")->offset), topoName,
                       topology->gpusPerNode, topology->nvlDomainSize,
                       llvm::APFloat(topology->nvlinkGBps),
                       llvm::APFloat(topology->nicGBps),
                       llvm::APFloat(topology->nvlinkLatencyUs),
                       llvm::APFloat(topology->nicLatencyUs));
    topoRef = FlatSymbolRefAttr::get(ctx, topoName);
  }
  auto shardingAttr = [&](const ShardingSpec &spec) {
    SmallVector<DimShardingAttr> dims;
    for (const DimShardingSpec &d : spec.dims) {
      SmallVector<StringAttr> axes;
      for (const std::string &a : d.axes)
        axes.push_back(b.getStringAttr(a));
      SmallVector<int64_t> order;
      for (const OrderRun &r : d.order)
        order.append({r.start, r.length});
      dims.push_back(DimShardingAttr::get(ctx, axes, d.blocks, order));
    }
    const QuantSpec &q = spec.quant;
    return ShardingAttr::get(ctx, dims, spec.dimOrder,
                             q.kind == QuantSpec::Block
                                 ? ArrayRef<int64_t>(q.block)
                                 : ArrayRef<int64_t>(),
                             q.kind == QuantSpec::Mx ? q.mx : 0, q.ue8m0);
  };
  for (const TensorEntry &t : tensors) {
    auto type =
        RankedTensorType::get(t.shape, getElementTypeForDtype(ctx, t.dtype));
    // A quantized destination holds FP8 E4M3 payload.
    auto dstType =
        t.dst.quant.empty()
            ? type
            : RankedTensorType::get(t.shape, b.getType<Float8E4M3FNType>());
    RedistributeOp::create(b, locAt(t.offset), t.name, t.srcMesh,
                           shardingAttr(t.src), t.dstMesh, shardingAttr(t.dst),
                           type, dstType, topoRef);
  }
  // The checks above mirror the verifier; this catches any drift between them.
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp> reshard::importLayoutJSON(llvm::SourceMgr &sourceMgr,
                                                MLIRContext *context) {
  context->getOrLoadDialect<ReshardDialect>();
  return Importer(sourceMgr, context).run();
}

OwningOpRef<ModuleOp>
reshard::parseLayoutOrMLIR(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                           MLIRContext *context) {
  const llvm::MemoryBuffer *buf =
      sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
  if (isLayoutJSON(buf->getBufferIdentifier(), buf->getBuffer()))
    return importLayoutJSON(*sourceMgr, context);
  return parseModuleWithLimits(sourceMgr, context);
}

void reshard::registerImportLayoutJSONTranslation() {
  TranslateToMLIRRegistration registration(
      "import-layout-json",
      "Import the layout interchange JSON into the reshard dialect",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) {
        return OwningOpRef<Operation *>(
            importLayoutJSON(sourceMgr, context).release());
      },
      [](DialectRegistry &registry) { registry.insert<ReshardDialect>(); });
}
