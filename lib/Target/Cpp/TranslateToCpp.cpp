//===- TranslateToCpp.cpp - reshard_rt plans to table-driven C++ ----------===//
//
// The generated code is data: the plan's tables in the schema of
// include/reshard/ExecutionEngine/PlanTables.h, as reshard::rt::EncodedPlan
// encodes them, and a few lines that hand them to the backend, so a
// whole-model plan compiles about as fast as its tables parse.
//
//===----------------------------------------------------------------------===//
#include "reshard/Target/Cpp/TranslateToCpp.h"

#include "reshard/Dialect/Reshard/IR/ReshardDialect.h"
#include "reshard/Dialect/Runtime/IR/PlanEncoding.h"
#include "reshard/ExecutionEngine/QuantLaunch.h"
#include "reshard/Support/InputFiles.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"

#include <cctype>
#include <cstdio>

using namespace mlir;
using namespace reshard;

static std::string cString(StringRef s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c < 0x20 || c >= 0x7f || c == '?') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\%03o", static_cast<unsigned>(c));
      out += buf;
    } else
      out += c;
  }
  return out + "\"";
}

/// A table of structs or integers, `perLine` entries a line; C++ has no
/// empty arrays, so an empty table is one zero entry (its length, recorded
/// beside it, says 0).
/// `comment`, when given, writes a comment after each row (on its line).
/// Streams past this many are emitted without a comment each.
constexpr size_t kMaxCommentedStreams = 4096;

template <class T, class Print>
static void emitTable(raw_ostream &os, StringRef type, StringRef name,
                      const std::vector<T> &rows, unsigned perLine, Print print,
                      llvm::function_ref<void(const T &)> comment = nullptr) {
  os << "const " << type << " " << name << "[] = {";
  if (rows.empty())
    os << "\n    {}";
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i % perLine == 0)
      os << "\n   ";
    os << " ";
    print(rows[i], i);
    os << ",";
    if (comment) {
      os << " // ";
      comment(rows[i]);
    }
  }
  // A comment runs to the end of its line.
  os << (comment && !rows.empty() ? "\n" : "") << "};\n\n";
}

/// `return reshard::engine::<backend>::run(kPlan, rank, <args>);`, the MPI
/// backend's stream voided first (`note` after it); `<stream>` in `args`
/// is the NCCL backend's stream argument.
static std::string backendRun(CppBackend backend, StringRef args,
                              StringRef note = "") {
  bool mpi = backend == CppBackend::Mpi;
  std::string call = args.str();
  StringRef slot = "<stream>";
  call.replace(call.find(slot.str()), slot.size(), mpi ? "" : "stream, ");
  std::string out = mpi ? ("  (void)stream;" + note + "\n").str() : "";
  return out + "  return reshard::engine::" + (mpi ? "mpi" : "nccl") +
         "::run(kPlan, rank, " + call + ");";
}

/// What callers that check their own tensors need (python/reshard's
/// runtime): dtypes and shard shapes, a way to make every rank refuse a
/// call, and the digests behind `verify=True`.
static void emitCallerChecks(raw_ostream &os, StringRef name, StringRef comm,
                             StringRef stream, CppBackend backend,
                             bool definitions) {
  auto body = [&](StringRef text) {
    return definitions ? (" {\n" + text + "\n}").str() : std::string(";");
  };
  os << llvm::formatv(
      "const char *{0}_backend(void){1}\n", name,
      definitions ? llvm::formatv(" {{ return \"{0}\"; }",
                                  backend == CppBackend::Mpi ? "mpi" : "nccl")
                        .str()
                  : std::string(";"));
  os << llvm::formatv(
      "const char *{0}_tensor_dtype(int tensor){1}\n"
      "int {0}_tensor_ndim(int tensor){2}\n"
      "int {0}_shard_shape(int rank, int tensor, int src, int64_t *dims){3}\n"
      "int {0}_reject(int rank, {4} comm, {5}stream, const char *why,\n"
      "    char *err, size_t errlen){6}\n"
      "int64_t {0}_digests(int rank, const void *const *src,\n"
      "    const void *const *dst, const void *workspace, reshard_digest "
      "*out,\n"
      "    int64_t capacity){7}\n"
      "const char *{0}_source_dtype(int tensor){8}\n",
      name,
      body("  return tensor >= 0 && tensor < kPlan.num_tensors && "
           "kPlan.tensor_dtypes\n             ? kPlan.tensor_dtypes[tensor] "
           ": 0;"),
      body("  return static_cast<int>(reshard::engine::tensor_ndim(kPlan, "
           "tensor));"),
      body("  return static_cast<int>(\n      "
           "reshard::engine::shard_shape(kPlan, rank, tensor, src != 0, "
           "dims));"),
      comm, stream,
      body(backendRun(backend, "0, 0, comm, <stream>0, 0, err, errlen,\n"
                               "      why ? why : \"rejected by the caller\"")),
      body("  return reshard::engine::rank_digests(kPlan, rank, src, dst, "
           "workspace,\n      out, capacity);"),
      body("  return reshard::engine::source_dtype(kPlan, tensor);"));
}

static void emitSignatures(raw_ostream &os, StringRef name, CppBackend backend,
                           bool definitions) {
  static constexpr StringLiteral kRunArgs =
      "src, dst, comm, <stream>workspace,\n      workspace_bytes, err, errlen";
  StringRef comm = backend == CppBackend::Mpi ? "MPI_Comm" : "ncclComm_t";
  StringRef stream = backend == CppBackend::Mpi ? "void *" : "cudaStream_t ";
  os << llvm::formatv(
      "size_t {0}_workspace_bytes(int rank){1}\n"
      "int {0}_run(int rank, void *const *src, void *const *dst, {2} comm,\n"
      "    {3}stream, void *workspace, size_t workspace_bytes, char *err,\n"
      "    size_t errlen){4}\n"
      "uint64_t {0}_fingerprint(void){5}\n"
      "int {0}_num_ranks(void){6}\n"
      "int {0}_num_tensors(void){7}\n"
      "const char *{0}_tensor_name(int tensor){8}\n"
      "int64_t {0}_src_bytes(int rank, int tensor){9}\n"
      "int64_t {0}_dst_bytes(int rank, int tensor){10}\n",
      name,
      definitions
          ? " {\n  return reshard::engine::workspace_bytes(kPlan, rank);\n}"
          : ";",
      comm, stream,
      definitions
          ? " {\n" +
                backendRun(backend, kRunArgs, " // MPI runs on host memory") +
                "\n}"
          : std::string(";"),
      definitions ? " { return kPlan.fingerprint; }" : ";",
      definitions ? " { return kPlan.num_ranks; }" : ";",
      definitions ? " { return kPlan.num_tensors; }" : ";",
      definitions ? " {\n  return tensor >= 0 && tensor < kPlan.num_tensors "
                    "? kPlan.tensor_names[tensor] : 0;\n}"
                  : ";",
      definitions ? " {\n  return reshard::engine::shard_bytes(kPlan, rank, "
                    "tensor, true);\n}"
                  : ";",
      definitions ? " {\n  return reshard::engine::shard_bytes(kPlan, rank, "
                    "tensor, false);\n}"
                  : ";");
  // _run with RESHARD_RUN_* flags that every rank must pass alike.
  os << llvm::formatv(
      "int {0}_run_flags(int rank, void *const *src, void *const *dst,\n"
      "    {1} comm, {2}stream, void *workspace, size_t workspace_bytes,\n"
      "    unsigned flags, char *err, size_t errlen){3}\n",
      name, comm, stream,
      definitions
          ? " {\n" + backendRun(backend, (kRunArgs + ", 0, flags").str()) +
                "\n}"
          : std::string(";"));
  emitCallerChecks(os, name, comm, stream, backend, definitions);
}

/// What a stream moves, for its comment: its first tensor (an index into
/// kTensorNames) and how many more pieces.
static std::string streamTensors(const rt::EncodedPlan &e,
                                 const engine::Stream &s) {
  const engine::Plan &p = e.view();
  int64_t first = -1, members = 0;
  for (int64_t i = s.first_item; i < s.first_item + s.num_items; ++i) {
    const engine::Item &it = p.items[i];
    if (first < 0)
      first = engine::member_tensor(p, p.groups[it.group], it.start);
    members += it.count;
  }
  std::string out = "tensor " + std::to_string(first);
  if (members > 1)
    out += " +" + std::to_string(members - 1);
  return out;
}

/// The GPU quantizer describes a shard by value (QuantLaunch.h): at
/// most kQuantMaxDims dims and kQuantMaxRuns runs per dim. A plan for the
/// NCCL backend beyond that is refused here rather than by the rank that
/// meets the shard, after the agreement. (Not emitOpError: that prints
/// the whole plan after the message.)
static LogicalResult checkGpuQuantizer(rt::PlanOp plan,
                                       const rt::EncodedPlan &e) {
  const engine::Plan &p = e.view();
  for (const engine::QuantTensor &q : e.quantTensors) {
    const engine::QuantClass &qc = p.quant_classes[q.qclass];
    const engine::Class &c = p.classes[p.groups[p.tensor_group[q.payload]].cls];
    bool receiver = qc.side == engine::kQuantOnReceiver;
    StringRef where = receiver ? "receivers" : "senders";
    // The group's location is its redistributions'.
    Location loc = e.groupOpOf(p.tensor_group[q.payload]).getLoc();
    if (c.ndim > engine::kQuantMaxDims)
      return emitError(loc)
             << "the plan quantizes tensor '" << e.tensorNames[q.payload]
             << "' of " << c.ndim << " dims on its " << where
             << ", more than the " << engine::kQuantMaxDims
             << " the GPU quantizer takes; the NCCL backend cannot run this "
                "plan (the MPI backend can)";
    int64_t combos = receiver ? c.dst_combos : c.src_combos;
    for (int64_t k = 0; k < combos; ++k) {
      const int64_t *runs = p.words + p.words[qc.segments + k];
      for (int64_t d = 0; d < c.ndim; runs += 1 + *runs, ++d)
        if (*runs > engine::kQuantMaxRuns)
          return emitError(loc)
                 << "the plan quantizes tensor '" << e.tensorNames[q.payload]
                 << "' on its " << where << " from shards in " << *runs
                 << " runs along dim " << d << ", more than the "
                 << engine::kQuantMaxRuns
                 << " per dim the GPU quantizer takes; the NCCL backend "
                    "cannot run this plan (the MPI backend can)";
    }
  }
  return success();
}

LogicalResult reshard::translatePlanToCpp(rt::PlanOp plan, CppBackend backend,
                                          bool header, raw_ostream &os) {
  StringRef name = plan.getSymName();
  if (name.empty() ||
      !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') ||
      !llvm::all_of(name, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
      }))
    return plan.emitOpError() << "name '" << name
                              << "' is not a C identifier; the C functions "
                                 "are named after the plan";
  std::string guard = "RESHARD_PLAN_" + StringRef(name).upper() + "_H";
  StringRef backendName = backend == CppBackend::Mpi ? "mpi" : "nccl";
  os << "// Generated by reshard from plan @" << name << " for the "
     << backendName << " backend.\n";
  if (header) {
    os << "// Do not edit. Tensors, in the order of the src/dst arrays:\n";
    // Names appear escaped even in comments: a newline or a trailing
    // backslash must not change the code around them.
    for (auto [i, t] : llvm::enumerate(plan.getTensors()))
      os << "//   " << i << ": " << cString(cast<StringAttr>(t).getValue())
         << "\n";
    os << "#ifndef " << guard << "\n#define " << guard << "\n\n"
       << "#include <stddef.h>\n#include <stdint.h>\n";
    if (backend == CppBackend::Mpi)
      os << "#include <mpi.h>\n";
    else
      os << "#include <cuda_runtime.h>\n#include <nccl.h>\n";
    os << "\n// RESHARD_OK and the RESHARD_ERR_* codes <plan>_run returns.\n"
          "#include \"reshard/ExecutionEngine/ErrorCodes.h\"\n";
    os << "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
    emitSignatures(os, name, backend, false);
    os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif // " << guard << "\n";
    return success();
  }
  std::unique_ptr<rt::EncodedPlan> encoded = rt::EncodedPlan::encode(plan);
  if (!encoded)
    return failure();
  const rt::EncodedPlan &e = *encoded;
  const engine::Plan &p = e.view();
  if (backend == CppBackend::Nccl && failed(checkGpuQuantizer(plan, e)))
    return failure();
  // What every process of the job holds in memory for this plan.
  auto bytesOf = [](const auto &v) { return v.size() * sizeof(v[0]); };
  size_t nameBytes = 0;
  for (const std::string &n : e.tensorNames)
    nameBytes += n.size() + 1 + sizeof(char *);
  nameBytes += e.tensorDtypes.size() * sizeof(char *); // literals are pooled
  size_t tables = bytesOf(e.words) + bytesOf(e.tensorGroup) +
                  bytesOf(e.meshes) + bytesOf(e.classes) + bytesOf(e.pieces) +
                  bytesOf(e.groups) + bytesOf(e.items) + bytesOf(e.streamRows) +
                  bytesOf(e.streamBodies) + bytesOf(e.programs) +
                  bytesOf(e.programOfRank) + nameBytes;
  os << "// Do not edit. Tensors: kTensorNames, in the order of the src/dst "
        "arrays.\n"
     << llvm::formatv("// Tables: {0} bytes ({1} items, {2} streams of {5} "
                      "bodies, {3} words, {4} programs), the same on every "
                      "rank.\n",
                      tables, e.items.size(), e.streams.size(), e.words.size(),
                      e.programs.size(), e.streamBodies.size());
  os << "#include \"reshard/ExecutionEngine/"
     << (backend == CppBackend::Mpi ? "MpiBackend.h" : "NcclBackend.h")
     << "\"\n";
  // The GPU quantizer is a CUDA kernel: such a plan needs nvcc. The host
  // loops' divisions must be IEEE: -ffast-math may make them reciprocal
  // products (nvcc's -use_fast_math is harmless: the kernels use PTX).
  if (backend == CppBackend::Nccl && !e.quantTensors.empty())
    os << "#if !defined(__CUDACC__)\n#error \"this plan quantizes on the "
          "GPU: compile it with nvcc -x cu (CMake: enable_language(CUDA) "
          "before reshard_add_plan)\"\n#endif\n";
  if (!e.quantTensors.empty())
    os << "#if defined(__FAST_MATH__)\n#error \"this plan quantizes to FP8 "
          "with IEEE divisions: compile it without -ffast-math\"\n#endif\n";
  os << "\nnamespace {\n\nusing namespace reshard::engine;\n\n";

  // Names are escaped C strings: a newline or a trailing backslash must
  // not change the code around them.
  std::vector<int64_t> tensorIndex(e.tensorNames.size());
  for (size_t i = 0; i < tensorIndex.size(); ++i)
    tensorIndex[i] = i;
  emitTable<int64_t>(
      os, "char *const", "kTensorNames", tensorIndex, 1,
      [&](int64_t i, size_t) { os << cString(e.tensorNames[i]); },
      [&](const int64_t &i) { os << i; });
  emitTable(os, "int64_t", "kTensorGroup", e.tensorGroup, 16,
            [&](int64_t v, size_t) { os << v; });
  if (!e.tensorDtypes.empty())
    emitTable<std::string>(
        os, "char *const", "kTensorDtypes", e.tensorDtypes, 12,
        [&](const std::string &d, size_t) { os << cString(d); });
  os << "// Rank lists, combo maps, shard sizes, members and box\n"
        "// descriptors, each stored once (see PlanTables.h).\n";
  emitTable(os, "int64_t", "kWords", e.words, 16,
            [&](int64_t v, size_t) { os << v; });
  os << "// {num_ranks, ranks}\n";
  emitTable(os, "Mesh", "kMeshes", e.meshes, 4,
            [&](const engine::Mesh &m, size_t) {
              os << "{" << m.num_ranks << ", " << m.ranks << "}";
            });
  os << "// {first_piece, num_pieces, src_devices, src_combo_of, src_combos,\n"
        "//  src_shard_bytes, dst_devices, dst_combo_of, dst_combos,\n"
        "//  dst_shard_bytes, ndim, src_shapes, dst_shapes}\n";
  emitTable(os, "Class", "kClasses", e.classes, 1,
            [&](const engine::Class &c, size_t) {
              os << "{" << c.first_piece << ", " << c.num_pieces << ", "
                 << c.src_devices << ", " << c.src_combo_of << ", "
                 << c.src_combos << ", " << c.src_shard_bytes << ", "
                 << c.dst_devices << ", " << c.dst_combo_of << ", "
                 << c.dst_combos << ", " << c.dst_shard_bytes << ", " << c.ndim
                 << ", " << c.src_shapes << ", " << c.dst_shapes << "}";
            });
  os << "// {src_combo, dst_combo, bytes, pack, unpack, copy}\n";
  emitTable(os, "Piece", "kPieces", e.pieces, 2,
            [&](const engine::Piece &x, size_t) {
              os << "{" << x.src_combo << ", " << x.dst_combo << ", " << x.bytes
                 << ", " << x.pack << ", " << x.unpack << ", " << x.copy << "}";
            });
  os << "// {class, src_mesh, dst_mesh, first_member, num_members}\n";
  emitTable(os, "Group", "kGroups", e.groups, 2,
            [&](const engine::Group &g, size_t) {
              os << "{" << g.cls << ", " << g.src_mesh << ", " << g.dst_mesh
                 << ", " << g.first_member << ", " << g.num_members << "}";
            });
  os << "// {group, piece, start, stride, count}: one piece of members\n"
        "// start + i * stride, i < count; streams name ranges of these.\n";
  emitTable(os, "Item", "kItems", e.items, 6,
            [&](const engine::Item &it, size_t) {
              os << "{" << it.group << "," << it.piece << "," << it.start << ","
                 << it.stride << "," << it.count << "}";
            });
  // Past a few thousand streams nobody reads them one by one, and the
  // comments were half of a large plan's C++ (Kimi-K2: 6 of 20 MB).
  bool commentStreams = e.streams.size() <= kMaxCommentedStreams;
  os << "// Stream bodies, shared by the streams that differ only in their\n"
        "// receiver: {phase, start, quota, bytes, num_items, first_item}\n";
  emitTable<engine::StreamBody>(
      os, "StreamBody", "kStreamBodies", e.streamBodies, 2,
      [&](const engine::StreamBody &b, size_t) {
        os << "{" << b.phase << "," << b.start << "," << b.quota << ","
           << b.bytes << "," << b.num_items << "," << b.first_item << "}";
      });
  os << "// {sender, receiver, body (a kStreamBodies index)}"
     << (commentStreams
             ? ", // its steps,\n// receiver, first tensor (an index into "
               "kTensorNames) +how many more\n// pieces."
             : llvm::formatv(". Not commented past\n// {0} streams (the "
                             "lowered reshard_rt program lists them).",
                             kMaxCommentedStreams)
                   .str())
     << " A step sends one\n// message per peer: the active streams to that "
        "peer.\n";
  auto streamComment = [&](const engine::Stream &s) {
    int64_t steps = engine::stream_steps(s);
    os << "step" << (steps > 1 ? "s " : " ") << s.start;
    if (steps > 1)
      os << "-" << s.start + steps - 1;
    os << " to " << s.receiver;
    if (engine::transit_in(s))
      os << " (transit to " << s.phase - engine::kTransitIn << ")";
    else if (engine::transit_out(s))
      os << " (transit from " << s.phase - engine::kTransitOut << ")";
    else if (s.phase)
      os << " (relay)";
    os << ": " << streamTensors(e, s);
  };
  auto rowComment = [&](const engine::StreamRow &r) {
    streamComment(e.streams[&r - e.streamRows.data()]);
  };
  emitTable<engine::StreamRow>(
      os, "StreamRow", "kStreams", e.streamRows, 1,
      [&](const engine::StreamRow &r, size_t) {
        os << "{" << r.sender << "," << r.receiver << "," << r.body << "}";
      },
      commentStreams
          ? llvm::function_ref<void(const engine::StreamRow &)>(rowComment)
          : nullptr);
  os << "// {rank, workspace, first_copy, num_copies, first_send, "
        "num_sends,\n//  recvs, num_recvs, steps}\n";
  emitTable(os, "RankProgram", "kPrograms", e.programs, 1,
            [&](const engine::RankProgram &r, size_t) {
              os << "{" << r.rank << ", " << r.workspace << ", " << r.first_copy
                 << ", " << r.num_copies << ", " << r.first_send << ", "
                 << r.num_sends << ", " << r.recvs << ", " << r.num_recvs
                 << ", " << r.steps << "}";
            });
  emitTable(os, "int32_t", "kProgramOf", e.programOfRank, 32,
            [&](int32_t v, size_t) { os << v; });
  std::string quant = ",\n    /*quant_classes=*/0, 0, /*quant_tensors=*/0, 0, "
                      "/*tensor_quant=*/0";
  if (!e.quantTensors.empty()) {
    os << "// Quantized destinations: {kind, ndim, blocks, segments, "
          "side}\n";
    emitTable(os, "QuantClass", "kQuantClasses", e.quantClasses, 2,
              [&](const engine::QuantClass &q, size_t) {
                os << "{" << q.kind << ", " << q.ndim << ", " << q.blocks
                   << ", " << q.segments << ", " << q.side << "}";
              });
    os << "// {payload, scales, input, qclass}\n";
    emitTable(os, "QuantTensor", "kQuantTensors", e.quantTensors, 4,
              [&](const engine::QuantTensor &q, size_t) {
                os << "{" << q.payload << ", " << q.scales << ", " << q.input
                   << ", " << q.qclass << "}";
              });
    emitTable(os, "int32_t", "kTensorQuant", e.tensorQuant, 32,
              [&](int32_t v, size_t) { os << v; });
    quant = llvm::formatv(",\n    kQuantClasses, {0}, kQuantTensors, {1}, "
                          "kTensorQuant",
                          e.quantClasses.size(), e.quantTensors.size())
                .str();
  }
  os << llvm::formatv(
      "// Fields named as in struct Plan (ExecutionEngine/PlanTables.h).\n"
      "const Plan kPlan = {{\n"
      "    /*name=*/{0}, /*fingerprint=*/{1:x}ull,\n"
      "    /*num_ranks=*/{2}, /*num_tensors=*/{3},\n"
      "    kTensorNames, {15}, kTensorGroup,\n"
      "    kMeshes, /*num_meshes=*/{4}, kClasses, /*num_classes=*/{5},\n"
      "    kPieces, /*num_pieces=*/{6}, kGroups, /*num_groups=*/{7},\n"
      "    kItems, /*num_items=*/{8}, kStreams, /*num_streams=*/{9},\n"
      "    kStreamBodies, /*num_stream_bodies=*/{18},\n"
      "    kPrograms, /*num_programs=*/{10}, kProgramOf,\n"
      "    kWords, /*num_words=*/{11}, /*staging_budget=*/{12},\n"
      "    /*max_ops_per_step=*/{13}, /*max_steps=*/{14},\n"
      "    /*receives_ahead=*/{17}{16}};\n\n"
      "} // namespace\n\nextern \"C\" {{\n\n",
      cString(name), p.fingerprint, p.num_ranks, p.num_tensors, p.num_meshes,
      p.num_classes, p.num_pieces, p.num_groups, p.num_items, p.num_streams,
      p.num_programs, p.num_words, p.staging_budget, p.max_ops_per_step,
      p.max_steps,
      e.tensorDtypes.empty() ? "/*tensor_dtypes=*/0" : "kTensorDtypes", quant,
      p.receives_ahead, p.num_stream_bodies);
  emitSignatures(os, name, backend, true);
  // Discovery: python/reshard's Plan.load finds the plans of a shared
  // library here. The weak definitions of every plan in one library merge
  // into one list, which each plan joins when the library loads.
  os << "\n#define RESHARD_MAX_PLANS_PER_LIBRARY 64\n"
        "__attribute__((weak)) const char "
        "*reshard_plans[RESHARD_MAX_PLANS_PER_LIBRARY];\n"
        "__attribute__((weak)) int reshard_num_plans;\n";
  os << "\n} // extern \"C\"\n\nnamespace {\n"
     << "__attribute__((used)) const int kRegistered =\n    (reshard_num_plans "
        "< "
        "RESHARD_MAX_PLANS_PER_LIBRARY\n"
        "         ? (reshard_plans[reshard_num_plans++] = "
     << cString(name) << ", 1)\n         : 0);\n"
     << "} // namespace\n";
  if (backend == CppBackend::Mpi)
    os << "\n#ifdef RESHARD_MPI_DRIVER\n#include "
          "\"reshard/ExecutionEngine/MpiDriver.h\"\n"
          "int main(int argc, char **argv) {\n"
          "  return reshard::engine::driver_main(kPlan, argc, argv);\n"
          "}\n#endif\n";
  return success();
}

FailureOr<rt::PlanOp>
reshard::parseLoweredPlan(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                          MLIRContext *ctx, StringRef translation,
                          OwningOpRef<ModuleOp> &module) {
  const llvm::MemoryBuffer *input =
      sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
  if (isLayoutJSON(input->getBufferIdentifier(), input->getBuffer()))
    return emitError(UnknownLoc::get(ctx))
           << input->getBufferIdentifier() << " is a layout JSON; "
           << translation
           << " translates a lowered reshard_rt.plan. Compile the layout "
              "with reshard-compile LAYOUT --backend=mpi|nccl";
  // The source dialect too, so that a module not lowered yet gets the
  // advice below rather than a parse error.
  ctx->loadDialect<rt::RuntimeDialect, ReshardDialect>();
  module = parseModuleWithLimits(sourceMgr, ctx);
  if (!module || failed(verify(*module)))
    return failure();
  // Only a lowered plan: planning and lowering are reshard-compile's (or
  // reshard-opt's, with the passes named).
  for (Operation &op : module->getBody()->getOperations())
    if (!isa<rt::PlanOp>(op))
      return op.emitError()
             << translation
             << " translates a lowered reshard_rt.plan, and this module "
                "also holds '"
             << op.getName()
             << "'; lower it first (reshard-compile LAYOUT "
                "--backend=mpi|nccl does the whole compile, or reshard-opt "
                "--reshard-plan-pipeline)";
  auto plans = module->getOps<rt::PlanOp>();
  if (std::distance(plans.begin(), plans.end()) != 1)
    return emitError(module->getLoc())
           << translation << " needs exactly one reshard_rt.plan";
  return *plans.begin();
}

void reshard::registerTranslateToCpp() {
  // Registered with the translation, so that tools linking the emitter
  // without it (reshard-compile) keep their own --backend.
  static llvm::cl::opt<std::string> backendOption(
      "backend", llvm::cl::desc("--reshard-to-cpp: mpi or nccl (default mpi)"),
      llvm::cl::init("mpi"));
  static llvm::cl::opt<std::string> emitOption(
      "reshard-cpp-emit",
      llvm::cl::desc("--reshard-to-cpp: source (default) or header"),
      llvm::cl::init("source"));
  TranslateRegistration registration(
      "reshard-to-cpp",
      "Emit a reshard plan as C++ for the MPI or NCCL backend",
      [](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
         llvm::raw_ostream &os, MLIRContext *ctx) -> LogicalResult {
        CppBackend backend;
        if (backendOption == "mpi")
          backend = CppBackend::Mpi;
        else if (backendOption == "nccl")
          backend = CppBackend::Nccl;
        else
          return emitError(UnknownLoc::get(ctx))
                 << "--backend must be mpi or nccl, not '" << backendOption
                 << "'";
        if (emitOption != "source" && emitOption != "header")
          return emitError(UnknownLoc::get(ctx))
                 << "--reshard-cpp-emit must be source or header, not '"
                 << emitOption << "'";
        OwningOpRef<ModuleOp> module;
        FailureOr<rt::PlanOp> plan =
            parseLoweredPlan(sourceMgr, ctx, "--reshard-to-cpp", module);
        if (failed(plan))
          return failure();
        return translatePlanToCpp(*plan, backend, emitOption == "header", os);
      });
}
