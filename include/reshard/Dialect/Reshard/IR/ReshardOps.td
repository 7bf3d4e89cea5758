//===- ReshardOps.td - Meshes, topologies, redistributions --*- tablegen -*-===//
#ifndef RESHARD_DIALECT_RESHARD_IR_RESHARDOPS_TD
#define RESHARD_DIALECT_RESHARD_IR_RESHARDOPS_TD

include "reshard/Dialect/Reshard/IR/ReshardAttrs.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/SymbolInterfaces.td"

def Reshard_MeshOp : Reshard_Op<"mesh", [Symbol]> {
  let summary = "An N-D array of devices with named axes";
  let description = [{
    Declares a device mesh: its shape, one unique name per axis, and the
    global rank of every device in row-major order (the device at mesh
    coordinate `c` is `ranks[linear(c)]`). Meshes of one module may share
    ranks, be disjoint, or overlap partly.

    ```mlir
    // 8 trainer GPUs as 2 data-parallel replicas of TP4, and 4 inference GPUs.
    reshard.mesh @train shape = [2, 4] axes = ["dp", "tp"]
        ranks = [0, 1, 2, 3, 4, 5, 6, 7]
    reshard.mesh @infer shape = [4] axes = ["tp"] ranks = [8, 9, 10, 11]
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    DenseI64ArrayAttr:$shape,
    StrArrayAttr:$axes,
    DenseI64ArrayAttr:$ranks
  );
  let assemblyFormat = [{
    $sym_name `shape` `=` $shape `axes` `=` $axes `ranks` `=` $ranks attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The plain-data form shared with the importers and the geometry.
    ::reshard::MeshSpec toSpec();
    /// Axis names, in mesh order.
    ::llvm::SmallVector<std::string> getAxisNames();
  }];
}

def Reshard_TopologyOp : Reshard_Op<"topology", [Symbol]> {
  let summary = "Where global ranks sit and how fast their links are";
  let description = [{
    Global rank `r` sits on node `r / gpus_per_node` and in NVLink domain
    `r / nvl_domain_size` (ranks numbered node by node, as launchers do). A
    domain holds whole nodes: 8 GPUs for DGX H100, 72 for GB200 NVL72.
    Bandwidths are per GPU in GB/s; latencies in microseconds (defaults 1 us
    over NVLink, 5 us over the network).

    ```mlir
    reshard.topology @dgx_h100 gpus_per_node = 8 nvl_domain_size = 8
        nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    I64Attr:$gpus_per_node,
    I64Attr:$nvl_domain_size,
    F64Attr:$nvlink_GBps_per_gpu,
    F64Attr:$nic_GBps_per_gpu,
    DefaultValuedAttr<F64Attr, "1.0">:$nvlink_latency_us,
    DefaultValuedAttr<F64Attr, "5.0">:$nic_latency_us
  );
  let assemblyFormat = [{
    $sym_name `gpus_per_node` `=` $gpus_per_node
    `nvl_domain_size` `=` $nvl_domain_size
    `nvlink_GBps_per_gpu` `=` $nvlink_GBps_per_gpu
    `nic_GBps_per_gpu` `=` $nic_GBps_per_gpu
    (`nvlink_latency_us` `=` $nvlink_latency_us^)?
    (`nic_latency_us` `=` $nic_latency_us^)?
    attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The plain-data form shared with the importers and the cost model.
    ::reshard::TopologySpec toSpec();
  }];
}

def Reshard_RedistributeOp : Reshard_Op<"redistribute",
    [Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Move one tensor from a source sharding to a destination sharding";
  let description = [{
    After it, every element of every destination shard equals the element
    of the same global index in the source; nothing else is written. The
    symbol name is the tensor's name (unique in the module; dots allowed).
    Source and destination must agree on the global shape and element type:
    a redistribution moves elements unchanged. Supported element types:
    bf16, f16, f32, f64, f8E4M3FN, f8E5M2, and 8/16/32/64-bit integers.

    Example: a `[8, 4]` weight row-sharded over TP4 on trainer ranks 0-3,
    column-sharded over TP2 on inference ranks 4-5:

    ```
      source (tp = 4)                    destination (tp = 2)
      rank 0: rows 0-1, all columns      rank 4: all rows, columns 0-1
      rank 1: rows 2-3, all columns      rank 5: all rows, columns 2-3
      rank 2: rows 4-5, all columns
      rank 3: rows 6-7, all columns
    ```

    ```mlir
    reshard.mesh @train shape = [4] axes = ["tp"] ranks = [0, 1, 2, 3]
    reshard.mesh @infer shape = [2] axes = ["tp"] ranks = [4, 5]
    reshard.redistribute @"model.layers.0.mlp.down_proj.weight"
        from @train <[[tp], []]> to @infer <[[], [tp]]>
        : tensor<8x4xbf16> -> tensor<8x4xbf16>
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    FlatSymbolRefAttr:$src_mesh,
    Reshard_ShardingAttr:$src_sharding,
    FlatSymbolRefAttr:$dst_mesh,
    Reshard_ShardingAttr:$dst_sharding,
    TypeAttrOf<AnyRankedTensor>:$src_type,
    TypeAttrOf<AnyRankedTensor>:$dst_type,
    OptionalAttr<FlatSymbolRefAttr>:$topology
  );
  let assemblyFormat = [{
    $sym_name `from` $src_mesh $src_sharding `to` $dst_mesh $dst_sharding
    (`topology` $topology^)? `:` $src_type `->` $dst_type attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::RankedTensorType getSrcTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getSrcType());
    }
    ::mlir::RankedTensorType getDstTensorType() {
      return ::llvm::cast<::mlir::RankedTensorType>(getDstType());
    }
  }];
}


#endif // RESHARD_DIALECT_RESHARD_IR_RESHARDOPS_TD
