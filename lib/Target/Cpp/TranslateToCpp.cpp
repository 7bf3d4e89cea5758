//===- TranslateToCpp.cpp - reshard_rt plans to table-driven C++ ----------===//
//
// The generated code is data: one constant table per rank and a few lines
// that hand them to the backend's loops (include/reshard/Runtime), so a
// whole-model plan compiles about as fast as its tables parse.
//
//===----------------------------------------------------------------------===//
#include "reshard/Target/Cpp/TranslateToCpp.h"

#include "reshard/Conversion/Passes.h"
#include "reshard/Dialect/Reshard/Transforms/Passes.h"
#include "reshard/InitAll.h"
#include "reshard/Target/LayoutJSON/ImportLayoutJSON.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
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

/// `const int64_t name[] = {...};`, 16 numbers a line; an empty table is one
/// zero (C++ has no empty arrays) with length 0 recorded by the caller.
static void emitTable(raw_ostream &os, StringRef name, ArrayRef<int64_t> v) {
  os << "const int64_t " << name << "[] = {";
  if (v.empty())
    os << "0";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i % 16 == 0)
      os << "\n    ";
    os << v[i] << (i + 1 < v.size() ? "," : "");
  }
  os << "};\n";
}

static void emitSignatures(raw_ostream &os, StringRef name, CppBackend backend,
                           bool definitions) {
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
      definitions ? " {\n  return reshard_rt::workspace_bytes(kPlan, rank);\n}"
                  : ";",
      comm, stream,
      definitions
          ? llvm::formatv(" {{\n{1}  return reshard_rt::{0}::run(kPlan, "
                          "rank, src, dst, comm, {2}workspace,\n      "
                          "workspace_bytes, err, errlen);\n}",
                          backend == CppBackend::Mpi ? "mpi" : "nccl",
                          backend == CppBackend::Mpi
                              ? "  (void)stream; // MPI runs on host memory\n"
                              : "",
                          backend == CppBackend::Mpi ? "" : "stream, ")
                .str()
          : std::string(";"),
      definitions ? " { return kPlan.fingerprint; }" : ";",
      definitions ? " { return kPlan.num_ranks; }" : ";",
      definitions ? " { return kPlan.num_tensors; }" : ";",
      definitions ? " {\n  return tensor >= 0 && tensor < kPlan.num_tensors "
                    "? kPlan.tensor_names[tensor] : 0;\n}"
                  : ";",
      definitions ? " {\n  return shardBytes(rank, tensor, true);\n}" : ";",
      definitions ? " {\n  return shardBytes(rank, tensor, false);\n}" : ";");
}

void reshard::encodeRankProgram(rt::RankOp rank,
                                SmallVectorImpl<int64_t> &shards,
                                SmallVectorImpl<int64_t> &copies,
                                SmallVectorImpl<int64_t> &steps) {
  shards.append(rank.getShards().begin(), rank.getShards().end());
  for (Operation &op : rank.getBody().front()) {
    if (auto copy = dyn_cast<rt::CopyOp>(op)) {
      copies.append(copy.getCopies().begin(), copy.getCopies().end());
      continue;
    }
    auto step = cast<rt::StepOp>(op);
    SmallVector<rt::SendOp> sends(step.getBody().front().getOps<rt::SendOp>());
    SmallVector<rt::RecvOp> recvs(step.getBody().front().getOps<rt::RecvOp>());
    steps.append({static_cast<int64_t>(step.getIndex()),
                  static_cast<int64_t>(sends.size()),
                  static_cast<int64_t>(recvs.size())});
    for (rt::SendOp s : sends) {
      steps.append({static_cast<int64_t>(s.getPeer()),
                    static_cast<int64_t>(s.getBytes()),
                    static_cast<int64_t>(s.getStaging()),
                    static_cast<int64_t>(s.getPack().size())});
      steps.append(s.getPack().begin(), s.getPack().end());
    }
    for (rt::RecvOp v : recvs) {
      steps.append({static_cast<int64_t>(v.getPeer()),
                    static_cast<int64_t>(v.getBytes()),
                    static_cast<int64_t>(v.getStaging()),
                    static_cast<int64_t>(v.getUnpack().size())});
      steps.append(v.getUnpack().begin(), v.getUnpack().end());
    }
  }
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
  // kProgramOf has one entry per communicator rank.
  if (plan.getNumRanks() > (int64_t(1) << 24))
    return plan.emitOpError()
           << "has " << plan.getNumRanks()
           << " ranks; the C++ emitter supports up to " << (int64_t(1) << 24);
  StringRef backendName = backend == CppBackend::Mpi ? "mpi" : "nccl";
  os << "// Generated by reshard-translate --reshard-to-cpp --backend="
     << backendName << " from plan @" << name << ".\n"
     << "// Do not edit. Tensors, in the order of the src/dst arrays:\n";
  // Names appear escaped even in comments: a newline or a trailing
  // backslash must not change the code around them.
  for (auto [i, t] : llvm::enumerate(plan.getTensors()))
    os << "//   " << i << ": " << cString(cast<StringAttr>(t).getValue())
       << "\n";
  if (header) {
    os << "#ifndef " << guard << "\n#define " << guard << "\n\n"
       << "#include <stddef.h>\n#include <stdint.h>\n";
    if (backend == CppBackend::Mpi)
      os << "#include <mpi.h>\n";
    else
      os << "#include <cuda_runtime.h>\n#include <nccl.h>\n";
    os << "\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
    emitSignatures(os, name, backend, false);
    os << "\n#ifdef __cplusplus\n}\n#endif\n\n#endif // " << guard << "\n";
    return success();
  }
  os << "#include \"reshard/Runtime/"
     << (backend == CppBackend::Mpi ? "MpiBackend.h" : "NcclBackend.h")
     << "\"\n";
  os << "\nnamespace {\n\n";
  SmallVector<rt::RankOp> ranks(plan.getBody().front().getOps<rt::RankOp>());
  int64_t maxSteps = 0;
  for (rt::RankOp rank : ranks) {
    int64_t r = rank.getRank();
    SmallVector<int64_t> shards, copies, steps;
    encodeRankProgram(rank, shards, copies, steps);
    for (rt::StepOp step : rank.getBody().front().getOps<rt::StepOp>())
      maxSteps = std::max<int64_t>(maxSteps, step.getIndex() + 1);
    os << "// rank " << r << "\n";
    emitTable(os, llvm::formatv("kShards{0}", r).str(), shards);
    emitTable(os, llvm::formatv("kCopies{0}", r).str(), copies);
    emitTable(os, llvm::formatv("kSteps{0}", r).str(), steps);
    os << llvm::formatv("const int64_t kShards{0}Len = {1}, kCopies{0}Len = "
                        "{2}, kSteps{0}Len = {3};\n\n",
                        r, shards.size() / 3, copies.size(), steps.size());
  }
  os << "const reshard_rt::RankProgram kPrograms[] = {\n";
  if (ranks.empty())
    os << "    {0, 0, 0, 0, 0, 0, 0, 0}\n";
  for (rt::RankOp rank : ranks)
    os << llvm::formatv("    {{{0}, {1}, kShards{0}, kShards{0}Len, "
                        "kCopies{0}, kCopies{0}Len, kSteps{0}, "
                        "kSteps{0}Len},\n",
                        rank.getRank(), rank.getWorkspace());
  os << "};\n\n";
  SmallVector<int64_t> programOf(plan.getNumRanks(), -1);
  for (auto [i, rank] : llvm::enumerate(ranks))
    programOf[rank.getRank()] = i;
  os << "const int32_t kProgramOf[] = {";
  for (size_t i = 0; i < programOf.size(); ++i)
    os << (i % 32 == 0 ? "\n    " : "") << programOf[i]
       << (i + 1 < programOf.size() ? "," : "");
  os << "};\n\nconst char *const kTensorNames[] = {";
  if (plan.getTensors().empty())
    os << "0";
  for (auto [i, t] : llvm::enumerate(plan.getTensors()))
    os << (i ? ",\n    " : "\n    ") << cString(cast<StringAttr>(t).getValue());
  os << "};\n\n";
  os << llvm::formatv(
      "const reshard_rt::Plan kPlan = {{{0}, {1:x}ull, {2}, {3}, "
      "kTensorNames, kPrograms, {4}, kProgramOf, {5}};\n\n",
      cString(name), static_cast<uint64_t>(plan.getFingerprint()),
      plan.getNumRanks(), plan.getTensors().size(), ranks.size(), maxSteps);
  os << "int64_t shardBytes(int rank, int tensor, bool src) {\n"
        "  return reshard_rt::shard_bytes(reshard_rt::program(kPlan, rank), "
        "tensor, src);\n"
        "}\n\n} // namespace\n\nextern \"C\" {\n\n";
  emitSignatures(os, name, backend, true);
  os << "\n} // extern \"C\"\n";
  if (backend == CppBackend::Mpi)
    os << "\n#ifdef RESHARD_MPI_DRIVER\n#include "
          "\"reshard/Runtime/MpiDriver.h\"\n"
          "int main(int argc, char **argv) {\n"
          "  return reshard_rt::driver_main(kPlan, argc, argv);\n"
          "}\n#endif\n";
  return success();
}

static llvm::cl::opt<std::string>
    backendOption("backend",
                  llvm::cl::desc("--reshard-to-cpp: mpi or nccl (default mpi)"),
                  llvm::cl::init("mpi"));
static llvm::cl::opt<std::string>
    emitOption("reshard-cpp-emit",
               llvm::cl::desc("--reshard-to-cpp: source (default) or header"),
               llvm::cl::init("source"));

void reshard::registerTranslateToCpp() {
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
        DialectRegistry registry;
        registerAllDialects(registry);
        ctx->appendDialectRegistry(registry);
        ctx->loadAllAvailableDialects();
        OwningOpRef<ModuleOp> module = parseLayoutOrMLIR(sourceMgr, ctx);
        if (!module || failed(verify(*module)))
          return failure();
        if (module->getOps<rt::PlanOp>().empty()) {
          PassManager pm(ctx);
          pm.addPass(createReshardIntersect());
          pm.addPass(createReshardSelectSources());
          pm.addPass(createReshardSchedule());
          pm.addPass(createConvertReshardToRuntime());
          if (failed(pm.run(*module)))
            return failure();
        }
        if (!module->getOps<rt::PlanOp>().empty() &&
            !module->getOps<RedistributeOp>().empty())
          return emitError(
              module->getLoc(),
              "the module holds both a reshard_rt.plan and unlowered "
              "reshard.redistribute ops; translate one or the other");
        auto plans = module->getOps<rt::PlanOp>();
        if (std::distance(plans.begin(), plans.end()) != 1)
          return emitError(module->getLoc(),
                           "--reshard-to-cpp needs exactly one "
                           "reshard_rt.plan");
        return translatePlanToCpp(*plans.begin(), backend,
                                  emitOption == "header", os);
      });
}
