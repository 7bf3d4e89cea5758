//===- ReshardAttrs.td - Sharding attributes ----------------*- tablegen -*-===//
#ifndef RESHARD_DIALECT_RESHARD_IR_RESHARDATTRS_TD
#define RESHARD_DIALECT_RESHARD_IR_RESHARDATTRS_TD

include "reshard/Dialect/Reshard/IR/ReshardBase.td"
include "mlir/IR/EnumAttr.td"

def Reshard_DimShardingAttr : Reshard_Attr<"DimSharding", "dim_sharding"> {
  let summary = "How one tensor dim is split over mesh axes";
  let description = [{
    The mesh axes that split one tensor dim, major to minor, and optionally
    the consecutive blocks the dim is made of. Each block is chunked on its
    own over the same axes; a device's local extent is its piece of every
    block, concatenated in block order (fused q/k/v or gate/up weights).

    A dim may also have a storage order: runs `[start, length]` of the
    logical dim in the order they are stored. The stored dim is the runs
    concatenated; the axes and blocks split the stored dim. Elements keep
    their logical index everywhere else (Megatron's `linear_qkv` interleaves
    q, k and v per query group this way).

    Inside a `#reshard.sharding` it prints as `[axes...]`, followed by
    `order [[start, length], ...]` when the dim has an order and by
    `blocks [sizes...]` when it has blocks:

    ```mlir
    [tp]                          // split over tp
    [dp, tp]                      // split over dp, each chunk again over tp
    [tp] blocks [8192, 1024, 1024] // q, k and v each split over tp
    [tp] order [[4, 4], [0, 4]] blocks [4, 4] // [up; gate] of [gate; up]
    []                            // not split
    ```
  }];
  let parameters = (ins
    OptionalArrayRefParameter<"::mlir::StringAttr">:$axes,
    OptionalArrayRefParameter<"int64_t">:$blocks,
    // The runs flattened: start, length, start, length, ...
    OptionalArrayRefParameter<"int64_t">:$order
  );
  let hasCustomAssemblyFormat = 1;
}

def Reshard_ShardingAttr : Reshard_Attr<"Sharding", "sharding"> {
  let summary = "A tensor's sharding on a mesh: mesh axes per tensor dim";
  let description = [{
    One `#reshard.dim_sharding` per tensor dim. Mesh axes used by no dim
    replicate the tensor; an axis appears at most once in the whole sharding
    (checked by the op that uses it, which knows the mesh and the shape).

    Example: a `[4, 8]` tensor on a 2x2 mesh `(dp, tp)` sharded
    `<[[tp], []]>`. Rows 0-1 live on every device with tp = 0, rows 2-3 on
    every device with tp = 1; dp replicates:

    ```
      mesh (dp, tp)      tp=0        tp=1
      dp=0             rows 0-1    rows 2-3
      dp=1             rows 0-1    rows 2-3
    ```

    ```mlir
    #reshard.sharding<[[tp], []]>
    #reshard.sharding<[[dp, tp], [ep]]>
    #reshard.sharding<[[tp] blocks [8192, 1024, 1024], []]>
    #reshard.sharding<[]>            // a 0-D tensor
    ```

    A sharding may store the local buffer's dims in another order than the
    logical one: `dim_order [p0, p1, ...]` lists every dim once, outermost
    first (torch's `Tensor.dim_order()`), and the buffer is row-major over
    the local extents in that order. The shard holds the same elements;
    only where each one sits changes (gpt-oss's interleaved gate/up rows
    against Megatron's `[gate; up]`, as a `[2, f, h]` tensor stored
    `dim_order [1, 0, 2]`):

    ```mlir
    #reshard.sharding<[[], [tp], []] dim_order [1, 0, 2]>
    ```

    A destination sharding may end with how the destination is quantized
    to FP8 E4M3 (docs/Layout.md "Quantized destinations"): `quant block
    [b0, ...]` (one block size per dim, an fp32 scale per block; with
    `ue8m0` after the sizes, each scale rounded up to a power of two) or
    `quant mx 32` (MXFP8: blocks of 32 along the last dim, E8M0 scales). Every
    shard boundary along a blocked dim must then be a multiple of its
    block size; the redistribution checks it.

    ```mlir
    #reshard.sharding<[[], [tp]] quant block [128, 128]>
    #reshard.sharding<[[], [tp]] quant block [128, 128] ue8m0>
    #reshard.sharding<[[tp], []] quant mx 32>
    ```
  }];
  let parameters = (ins
    OptionalArrayRefParameter<"::reshard::DimShardingAttr">:$dims,
    OptionalArrayRefParameter<"int64_t">:$dim_order,
    OptionalArrayRefParameter<"int64_t">:$quant_block,
    DefaultValuedParameter<"int64_t", "0">:$quant_mx,
    DefaultValuedParameter<"bool", "false">:$quant_ue8m0
  );
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<::reshard::DimShardingAttr>":$dims), [{
      return $_get($_ctxt, dims, ::llvm::ArrayRef<int64_t>(),
                   ::llvm::ArrayRef<int64_t>(), 0, false);
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    unsigned getRank() const { return getDims().size(); }
    bool isQuantized() const {
      return !getQuantBlock().empty() || getQuantMx() != 0;
    }
    /// The plain-data form shared with the importers and the geometry.
    ::reshard::ShardingSpec toSpec() const;
  }];
}

def Reshard_Routing : I32EnumAttr<"Routing",
    "How a group's senders are chosen", [
      I32EnumAttrCase<"Balanced", 0, "balanced">,
      I32EnumAttrCase<"Direct", 1, "direct">
    ]> {
  let cppNamespace = "::reshard";
  let genSpecializedAttr = 0;
}

def Reshard_RoutingAttr : EnumAttr<Reshard_Dialect, Reshard_Routing, "routing"> {
  let summary = "How a group's senders are chosen";
  let description = [{
    `balanced`: local, then NVLink, then one network crossing per NVLink
    domain, by the group's route rows; `direct`: a local copy or the lowest
    holder, no relay (the baseline). A group without one is not routed yet
    and moves as `direct` would.
  }];
}

#endif // RESHARD_DIALECT_RESHARD_IR_RESHARDATTRS_TD
