//===- TranslateToCpp.h - reshard_rt plans to C++ ---------------*- C++ -*-===//
#ifndef RESHARD_TARGET_CPP_TRANSLATETOCPP_H
#define RESHARD_TARGET_CPP_TRANSLATETOCPP_H

#include "reshard/Dialect/Runtime/IR/Runtime.h"

#include "llvm/Support/raw_ostream.h"

namespace reshard {

enum class CppBackend { Mpi, Nccl };

/// Writes the C++ translation unit (or, with `header`, the C header) of
/// `plan` for `backend`: constant per-rank tables and the extern "C" entry
/// points over the runtime headers in include/reshard/Runtime.
mlir::LogicalResult translatePlanToCpp(rt::PlanOp plan, CppBackend backend,
                                       bool header, llvm::raw_ostream &os);

/// The flat tables of one rank's program, as the generated code and the
/// runtime headers (reshard_rt::RankProgram) read them.
void encodeRankProgram(rt::RankOp rank, llvm::SmallVectorImpl<int64_t> &shards,
                       llvm::SmallVectorImpl<int64_t> &copies,
                       llvm::SmallVectorImpl<int64_t> &steps);

/// Registers `--reshard-to-cpp` (options `--backend=mpi|nccl`,
/// `--reshard-cpp-emit=source|header`). Input that is not lowered yet goes
/// through reshard-intersect, reshard-select-sources, reshard-schedule and
/// convert-reshard-to-runtime first.
void registerTranslateToCpp();

} // namespace reshard

#endif // RESHARD_TARGET_CPP_TRANSLATETOCPP_H
