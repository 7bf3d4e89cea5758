//===- PieceInterpreter.h - Execute piece tables on host memory -*- C++ -*-===//
//
// Runs every rank's pieces of a planned tensor inside one process, on host
// buffers: the semantic reference that every later stage and backend is
// checked against.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_REFERENCE_PIECEINTERPRETER_H
#define RESHARD_REFERENCE_PIECEINTERPRETER_H

#include "reshard/Layout/PieceTable.h"
#include "reshard/Layout/TensorLayout.h"
#include "reshard/Reference/ShardBuffers.h"

#include "llvm/Support/Error.h"

namespace reshard {

/// Checks that every row names ranks of the right meshes, a source that
/// holds the box, and boxes inside the global shape and both local
/// buffers, and that a relay receives what it forwards in an earlier step.
llvm::Error validatePieces(const TensorLayout &layout, const PieceTable &table);

/// Copies every piece from `src` to `dst` (which must hold every rank's
/// buffer at its local size), step by step. Validates first.
llvm::Error executePieces(const TensorLayout &layout, const PieceTable &table,
                          const ShardBuffers &src, ShardBuffers &dst);

} // namespace reshard

#endif // RESHARD_REFERENCE_PIECEINTERPRETER_H
