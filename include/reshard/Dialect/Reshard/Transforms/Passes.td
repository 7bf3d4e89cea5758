//===- Passes.td - Passes over the reshard dialect ----------*- tablegen -*-===//
#ifndef RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_TD
#define RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ReshardIntersect : Pass<"reshard-intersect", "mlir::ModuleOp"> {
  let summary = "Compute the exact pieces of every redistribution";
  let description = [{
    For every `reshard.redistribute` that has no `reshard.pieces` yet, adds
    one right after it: every destination rank's shard split into boxes where
    the source partition changes holders, each with the source ranks that
    hold it. A destination rank that holds a box itself copies it locally;
    otherwise the box comes from its lowest holder (`reshard-select-sources`
    balances that choice later). Work is per dim on intervals: it grows with
    the number of pieces, never with elements or with source x destination
    ranks. Tensors are intersected in parallel.

    Input:
    ```mlir
    reshard.mesh @a shape = [2] axes = ["tp"] ranks = [0, 1]
    reshard.mesh @b shape = [2] axes = ["tp"] ranks = [2, 3]
    reshard.redistribute @w from @a <[[tp], []]> to @b <[[], [tp]]>
        : tensor<4x4xf32> -> tensor<4x4xf32>
    ```
    Output (after the redistribute):
    ```mlir
    reshard.pieces @w rank 2 holders [[0], [1]] [
      box [0, 0] size [2, 2] from 0 at [0, 0] to 2 at [0, 0] group 0,
      box [2, 0] size [2, 2] from 1 at [0, 0] to 2 at [2, 0] group 1,
      box [0, 2] size [2, 2] from 0 at [0, 2] to 3 at [0, 0] group 0,
      box [2, 2] size [2, 2] from 1 at [0, 2] to 3 at [2, 0] group 1
    ]
    ```
  }];
  let dependentDialects = ["::reshard::ReshardDialect"];
}

#endif // RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_TD
