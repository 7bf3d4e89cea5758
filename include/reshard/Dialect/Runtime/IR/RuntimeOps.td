//===- RuntimeOps.td - Ops of the reshard_rt dialect --------*- tablegen -*-===//
#ifndef RESHARD_DIALECT_RUNTIME_IR_RUNTIMEOPS_TD
#define RESHARD_DIALECT_RUNTIME_IR_RUNTIMEOPS_TD

include "reshard/Dialect/Runtime/IR/RuntimeBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/SymbolInterfaces.td"

// Not IsolatedFromAbove (it uses no values anyway): its region verifier
// checks the tables after every nested op has verified itself.
def Runtime_PlanOp : Runtime_Op<"plan", [Symbol, NoTerminator, SingleBlock]> {
  let summary = "A compiled redistribution plan";
  let description = [{
    Meshes, classes, groups and item lists first, each numbered by its
    position (the printed index must equal it), then one `reshard_rt.rank`
    per rank with something to do, ascending. Tensors are indexed in input
    order; `dtypes`, when present, gives each one's interchange dtype name
    (`bf16`, `fp8e4m3`, ...), which must have its class's element size and
    which the generated code reports to callers that check their tensors.
    `fingerprint` records the hash of the whole plan's tables, as the
    lowering computed it; the encoder (and so the generated code, which
    compares it across ranks before any byte moves) computes it again from
    the tables, so a plan edited after lowering gets its own. `staging_budget` and
    `max_ops_per_step`, when present, bound the bytes a rank stages at any
    instant and its messages in every step. With `receives_ahead` the MPI
    backend posts each step's next receives while the step is in flight,
    and the staging and the budget count them.

    The verifier proves on the compact form, without listing pieces, what
    the generated code relies on: every index in range; every sender holds
    what it packs (its combo in the piece's mesh) and every receiver needs
    it; every send stream has exactly one matching receive; a relay
    forwards only what it received in phase 0, each item in a later step
    than the last byte of what brought it; each (tensor, destination rank, piece) arrives exactly once (the
    member progressions of each group piece and destination partition the
    group's members); staging within the budget, the operation bound and
    the stated workspace.

    Tensors quantized on their senders (docs/Layout.md "Quantized
    destinations") are listed in `quant_tensors`, four numbers each:
    payload tensor, scales tensor, the source's value type (0 fp32, 1
    bf16, 2 fp16) and a row of `quant_classes`. A `quant_classes` row is
    the kind (1 block scaling, 2 MX, 3 block scaling with power-of-two
    (ue8m0) scales), the side that quantizes (0 sender, 1 receiver), the
    rank n, n block sizes, the payload class's number of source combos,
    and per combo and dim the
    count of its runs and their lengths in local order (a block starts at
    each run). Each holder quantizes its source shard into the end of its
    workspace before the first step; the plan then moves payload and
    scales as the tensors they are. The encoder checks that the runs add
    up to every source shard and that the blocks they make are the scales
    tensor's source shard on the same rank.

    ```mlir
    reshard_rt.plan @refit num_ranks = 4 tensors = ["w"] dtypes = ["fp32"]
        fingerprint = 42 {
      reshard_rt.mesh 0 ranks [0, 1]
      reshard_rt.mesh 1 ranks [2, 3]
      reshard_rt.class 0 element_bytes 4 rank 2
          src combos [0, 1] shapes [[2, 4], [2, 4]]
          dst combos [0, 1] shapes [[4, 2], [4, 2]] { ... }
      reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
      reshard_rt.items 0 [g0.p0[0], g0.p2[0]]
      reshard_rt.rank 0 workspace = 32 {
        reshard_rt.send to 2 phase 0 start 0 quota 32 bytes 32 items 0
      }
      ...
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    I64Attr:$num_ranks,
    StrArrayAttr:$tensors,
    OptionalAttr<StrArrayAttr>:$dtypes,
    I64Attr:$fingerprint,
    OptionalAttr<I64Attr>:$staging_budget,
    OptionalAttr<I64Attr>:$max_ops_per_step,
    UnitAttr:$receives_ahead,
    OptionalAttr<DenseI64ArrayAttr>:$quant_classes,
    OptionalAttr<DenseI64ArrayAttr>:$quant_tensors
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `num_ranks` `=` $num_ranks `tensors` `=` $tensors
    (`dtypes` `=` $dtypes^)?
    `fingerprint` `=` $fingerprint
    (`staging_budget` `=` $staging_budget^)?
    (`max_ops_per_step` `=` $max_ops_per_step^)?
    (`receives_ahead` $receives_ahead^)?
    (`quant_classes` `=` $quant_classes^)?
    (`quant_tensors` `=` $quant_tensors^)?
    attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

def Runtime_MeshOp : Runtime_Op<"mesh", [HasParent<"PlanOp">]> {
  let summary = "The global ranks of a mesh, by row-major linear index";
  let arguments = (ins I64Attr:$index, DenseI64ArrayAttr:$ranks);
  let assemblyFormat = "$index `ranks` $ranks attr-dict";
  let hasVerifier = 1;
}

def Runtime_ClassOp : Runtime_Op<"class",
    [HasParent<"PlanOp">, NoTerminator, SingleBlock]> {
  let summary = "A tensor class: its shards and its pieces as box descriptors";
  let description = [{
    Tensors of one class share shape, element size, both shardings and both
    mesh shapes. `src combos` gives the combo of each source mesh device
    (by linear index; a combo is the row-major index of a device's
    coordinates on the mesh axes the sharding uses) and `shapes` the shard
    shape of each combo (extents by logical dim), followed by `dim_order
    [...]` when that side's buffers store their dims in another order
    (outermost first); likewise for the destination. The body holds the
    class's `reshard_rt.piece` ops, ordered by destination combo; the
    pieces of each destination combo tile its shard exactly once, which
    the verifier proves on their boxes.
  }];
  let arguments = (ins
    I64Attr:$index,
    I64Attr:$element_bytes,
    I64Attr:$rank,
    DenseI64ArrayAttr:$src_combo_of,
    DenseI64ArrayAttr:$src_shapes,
    DenseI64ArrayAttr:$dst_combo_of,
    DenseI64ArrayAttr:$dst_shapes,
    OptionalAttr<DenseI64ArrayAttr>:$src_dim_order,
    OptionalAttr<DenseI64ArrayAttr>:$dst_dim_order
  );
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The shard shape of combo `combo` on the source (`src`) or
    /// destination side.
    ::llvm::ArrayRef<int64_t> getShardShape(bool src, int64_t combo);
    /// The order in which that side's buffers store their dims, outermost
    /// first; empty: row-major in logical order.
    ::llvm::ArrayRef<int64_t> getDimOrder(bool src);
    int64_t getNumCombos(bool src);
  }];
}

def Runtime_PieceOp : Runtime_Op<"piece", [HasParent<"ClassOp">]> {
  let summary = "One piece of a class, with the descriptors that move it";
  let description = [{
    The box of `size` that every destination device of combo `dst` needs at
    `at` in its shard, held by every source device of combo `src` at
    `from`, and the descriptors derived from it (the verifier checks they
    are): `pack` in the source shard, `unpack` in the destination shard,
    `copy` both at once for a local copy.

    ```mlir
    reshard_rt.piece dst 0 src 1 size [2, 2] at [2, 0] from [0, 0]
        pack <+0 run 8 x [2 by 16]> unpack <+16 run 16>
        copy <+0 -> +16 run 8 x [2 by 16 -> 8]>
    ```
  }];
  let arguments = (ins
    I64Attr:$dst_combo,
    I64Attr:$src_combo,
    DenseI64ArrayAttr:$sizes,
    DenseI64ArrayAttr:$dst_offset,
    DenseI64ArrayAttr:$src_offset,
    Runtime_BoxAttr:$pack,
    Runtime_BoxAttr:$unpack,
    Runtime_CopyAttr:$copy
  );
  let assemblyFormat = [{
    `dst` $dst_combo `src` $src_combo `size` $sizes `at` $dst_offset
    `from` $src_offset `pack` $pack `unpack` $unpack `copy` $copy attr-dict
  }];
  let hasVerifier = 1;
}

def Runtime_GroupOp : Runtime_Op<"group", [HasParent<"PlanOp">]> {
  let summary = "The tensors of one class moving between two meshes";
  let description = [{
    Member k of the group is tensor `tensors[k]` (an index into the plan's
    tensors). The location is that of the redistributions.

    ```mlir
    reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 3, 5]
    ```
  }];
  let arguments = (ins
    I64Attr:$index,
    I64Attr:$class_index,
    I64Attr:$src_mesh,
    I64Attr:$dst_mesh,
    DenseI64ArrayAttr:$tensors
  );
  let assemblyFormat = [{
    $index `class` $class_index `from` $src_mesh `to` $dst_mesh
    `tensors` $tensors attr-dict
  }];
}

def Runtime_ItemsOp : Runtime_Op<"items", [HasParent<"PlanOp">]> {
  let summary = "A list of items: pieces of progressions of group members";
  let description = [{
    Each item `gG.pP[S by D x N]` names piece P of group G's class for
    members S, S + D, ..., S + (N - 1) D of group G (`[S x N]` when D is 1,
    `[S]` when N is 1). A stream's bytes are its items' boxes in order,
    member by member; the sender and the receiver of a stream name the same
    list. Stored as rows of 5 integers (group, piece, start, stride,
    count), the `reshard::engine::Item` schema.

    ```mlir
    reshard_rt.items 3 [g0.p1[0 by 2 x 4], g1.p0[5]]
    ```
  }];
  let arguments = (ins I64Attr:$index, DenseI64ArrayAttr:$rows);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Runtime_RankOp : Runtime_Op<"rank",
    [HasParent<"PlanOp">, NoTerminator, SingleBlock]> {
  let summary = "The program of one rank";
  let description = [{
    An optional `reshard_rt.copy` (local copies, before the first step),
    then the rank's sends ordered by (peer, phase), then its receives
    ordered likewise. `workspace` is the staging bytes its largest step
    needs (then a transit's carry, quantized sources' scales and shadows):
    in every
    step the messages are one per peer and direction (the active streams to
    that peer, phase 0 first), each at a multiple of 16 bytes, and a step
    stages its receives, its sends and, in a plan with `receives_ahead`,
    the next step's receives (even steps' receives at the start of the
    staging, odd steps' at its end, the sends after the even step's
    receives).
  }];
  let arguments = (ins I64Attr:$rank, I64Attr:$workspace);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $rank `workspace` `=` $workspace attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

def Runtime_CopyOp : Runtime_Op<"copy", [HasParent<"RankOp">]> {
  let summary = "Local copies: items from the rank's source to its destination shards";
  let arguments = (ins I64Attr:$items);
  let assemblyFormat = "`items` $items attr-dict";
}

def Runtime_SendOp : Runtime_Op<"send", [HasParent<"RankOp">]> {
  let summary = "A stream to one peer: items packed from source (phase 0) or destination (relay phases 1 + r) shards";
  let description = [{
    `bytes` bytes, `quota` bytes a step from step `start`: in step
    `start + i` bytes `[i * quota, min(bytes, (i + 1) * quota))` of the
    items' boxes in order. The location names the groups it moves.

    ```mlir
    reshard_rt.send to 2 phase 0 start 0 quota 4096 bytes 8192 items 7
    ```
  }];
  let arguments = (ins
    I64Attr:$peer, I64Attr:$phase, I64Attr:$start, I64Attr:$quota,
    I64Attr:$bytes, I64Attr:$items
  );
  let assemblyFormat = [{
    `to` $peer `phase` $phase `start` $start `quota` $quota `bytes` $bytes
    `items` $items attr-dict
  }];
  let hasVerifier = 1;
}

def Runtime_RecvOp : Runtime_Op<"recv", [HasParent<"RankOp">]> {
  let summary = "A stream from one peer, unpacked into destination shards";
  let description = [{
    The receiving end of the peer's `reshard_rt.send` to this rank in the
    same phase: the same start, quota, bytes and items.
  }];
  let arguments = (ins
    I64Attr:$peer, I64Attr:$phase, I64Attr:$start, I64Attr:$quota,
    I64Attr:$bytes, I64Attr:$items
  );
  let assemblyFormat = [{
    `from` $peer `phase` $phase `start` $start `quota` $quota `bytes` $bytes
    `items` $items attr-dict
  }];
  let hasVerifier = 1;
}

#endif // RESHARD_DIALECT_RUNTIME_IR_RUNTIMEOPS_TD
