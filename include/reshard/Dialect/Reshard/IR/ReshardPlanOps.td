//===- ReshardPlanOps.td - Classes, groups, schedules, pieces -*- tablegen -*-===//
//
// The planned form of a module: what `reshard-intersect`,
// `reshard-select-sources` and `reshard-schedule` write beside the layout
// ops, and the explicit piece tables of the reference path.
//
//===----------------------------------------------------------------------===//
#ifndef RESHARD_DIALECT_RESHARD_IR_RESHARDPLANOPS_TD
#define RESHARD_DIALECT_RESHARD_IR_RESHARDPLANOPS_TD

include "reshard/Dialect/Reshard/IR/ReshardAttrs.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/SymbolInterfaces.td"

def Reshard_ClassOp : Reshard_Op<"class",
    [Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The pieces of a tensor class, in mesh coordinates";
  let description = [{
    Tensors of one class share their global shape, element type, both
    shardings and both mesh shapes; `exemplar` names one of them (its
    layout defines the class). Their pieces are the same in mesh
    coordinates whatever ranks their meshes list, so they are computed and
    stored once.

    A *combo* is the row-major index of a device's coordinates on the mesh
    axes its sharding uses, in mesh axis order: the devices of one combo
    hold the same shard (they differ only on replicating axes). Each piece
    is a global box that every destination device of combo `dst` needs at
    its local offset, and that every source device of combo `src` holds at
    its local offset. The pieces of one destination combo tile its shard
    exactly once; the verifier proves it on the pattern, without looking at
    any tensor's ranks.

    The rows are stored dense in the schema that `reshard::ClassPattern`
    (include/reshard/Layout/ClassPattern.h) owns, one piece per line in the
    text form. TP2 rows to TP2 columns of a `[4, 4]` tensor:

    ```mlir
    reshard.class @class0 of @w rank 2 [
      box [0, 0] size [2, 2] dst 0 at [0, 0] src 0 at [0, 0],
      box [2, 0] size [2, 2] dst 0 at [2, 0] src 1 at [0, 0],
      box [0, 2] size [2, 2] dst 1 at [0, 0] src 0 at [0, 2],
      box [2, 2] size [2, 2] dst 1 at [2, 0] src 1 at [0, 2]
    ]
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    FlatSymbolRefAttr:$exemplar,
    I64Attr:$rank,
    DenseI64ArrayAttr:$rows
  );
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::reshard::ClassPattern toPattern();
    static ClassOp create(::mlir::OpBuilder &builder, ::mlir::Location loc,
                          ::llvm::StringRef name, ::llvm::StringRef exemplar,
                          const ::reshard::ClassPattern &pattern);
  }];
}

def Reshard_GroupOp : Reshard_Op<"group",
    [Symbol, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The tensors of one class between two meshes, and their routing";
  let description = [{
    Every `reshard.redistribute` of the module belongs to one group: the
    tensors of class `class` that move from mesh `from` to mesh `to`, in
    plan order. Their pieces are the same in rank space too, so a group is
    routed as a whole: `routing` (written by `reshard-select-sources`) says
    how senders are chosen, and `routes` holds the decisions where a choice
    exists, rows of (piece, kind, key, holder base, entry base, feeder) in
    the schema `reshard::RouteRow` (include/reshard/Layout/PlanRows.h) owns:
    for piece `piece`, the NVLink holder of the destination replica whose
    mesh linear index is `key`, or the network crossing into NVLink domain
    `key`. Member k of the group takes candidate `(holder + k) mod n` of
    the n holders that qualify and enters the domain at replica
    `(entry + k) mod m` of the m that need it there, which forwards it to
    the others. A network route `from domain F` (a relay tree) takes the
    piece from domain F's entry of member k instead of a holder. Decisions
    left out are 0, 0, none.

    ```mlir
    reshard.group @group0 class @class0 from @train to @infer
        tensors [@"layers.0.w", @"layers.1.w"]
    reshard.group @group1 class @class1 from @train to @infer
        tensors [@b] routing balanced routes [piece 0 network 1 holder 1 entry 0]
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    FlatSymbolRefAttr:$class_name,
    FlatSymbolRefAttr:$src_mesh,
    FlatSymbolRefAttr:$dst_mesh,
    TypedArrayAttrBase<FlatSymbolRefAttr, "tensor symbols">:$tensors,
    OptionalAttr<Reshard_RoutingAttr>:$routing,
    DenseI64ArrayAttr:$routes
  );
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Reshard_ScheduleOp : Reshard_Op<"schedule"> {
  let summary = "The steps of a plan: a start and a quota per stream";
  let description = [{
    Written by `reshard-schedule`. Everything one rank sends another in one
    phase (0: from holders' source shards; 1: what a relay forwards from its
    own destination shards; with `relay_lanes`, 1 + r: what a relay
    forwards of what holder r sent it, and 1 + R + r, R the rank count:
    what a fed domain's entry forwards of holder r's members that a
    feeder entry sent it; where the module has `reshard.relay_lane_span`
    = s, r is the first rank of the holder's block of s) is one stream, whose bytes are the transfers of
    the pair in the order the lowering gives them (Routing.md). A stream runs from
    step `start`, `quota` bytes a step; a relay's streams start after its
    last step of phase-0 receives. Every rank stays within
    `staging_budget` bytes at any instant (a step's sends and receives,
    what a transit keeps, and with `receives_ahead` the next step's
    receives, which the MPI backend then posts while the step is in
    flight) and within `max_ops_per_step` peers in every step. Rows of (sender, receiver, phase, start, quota) in
    the schema `reshard::PlanStream` (include/reshard/Layout/PlanRows.h)
    owns, sorted by (sender, receiver, phase).

    `transits` (rows of sender, receiver, via; `reshard::PlanTransit`,
    sorted by sender and receiver) reroutes a holder's stream to a rank of
    another NVLink domain through `via`, a GPU of either domain: it becomes
    the streams sender -> via in phase 2^31 + receiver and via -> receiver
    in phase 2^32 + sender, the latter one step later at the same quota;
    `via` forwards the bytes unchanged from its workspace.

    ```mlir
    reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
      stream 0 -> 1 phase 0 start 0 quota 64
    ]
    reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
      stream 0 -> 2 phase 2147483651 start 0 quota 64,
      stream 2 -> 3 phase 4294967296 start 1 quota 64
    ] transits [0 -> 3 via 2]
    ```
  }];
  let arguments = (ins
    I64Attr:$staging_budget,
    I64Attr:$max_ops_per_step,
    DenseI64ArrayAttr:$streams,
    UnitAttr:$relay_lanes,
    OptionalAttr<DenseI64ArrayAttr>:$transits,
    UnitAttr:$receives_ahead
  );
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Reshard_PiecesOp : Reshard_Op<"pieces",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "The exact pieces of one redistribution, as a dense table";
  let description = [{
    The explicit form of one tensor's plan, for reading and for the
    reference interpreter (`reshard-run`): `reshard-expand` writes it from
    the classes, groups and routes; it can also be written by hand. The
    planning passes and the lowering work on classes and groups instead.
    Each piece is a box of the global index space (offset and
    size), the source rank that sends it and where the box starts in that
    rank's local buffer, the destination rank that needs it and where it
    lands, and the group of source ranks that hold it (all at the same local
    offset: they differ only on replicated mesh axes). A piece whose source
    is its destination is a local copy.

    Pieces are stored as dense integer arrays (`rows`, one row of
    `5 + 4 * rank` integers per piece in the schema that
    `reshard::PieceTable` (include/reshard/Layout/PieceTable.h) owns:
    destination, source, holder group, relay, step,
    global offset, sizes, destination offset, source offset; holder groups
    in CSR form), so a model with millions of pieces stays compact; the
    text form prints one piece per line.

    TP2 rows on ranks 0-1 to TP2 columns on ranks 2-3 of a `[4, 4]` tensor:
    each destination column block takes one box from each source row block.

    ```mlir
    reshard.pieces @w rank 2 holders [[0], [1]] [
      box [0, 0] size [2, 2] from 0 at [0, 0] to 2 at [0, 0] group 0,
      box [2, 0] size [2, 2] from 1 at [0, 0] to 2 at [2, 0] group 1,
      box [0, 2] size [2, 2] from 0 at [0, 2] to 3 at [0, 0] group 0,
      box [2, 2] size [2, 2] from 1 at [0, 2] to 3 at [2, 0] group 1
    ]
    ```
  }];
  let arguments = (ins
    FlatSymbolRefAttr:$tensor,
    I64Attr:$rank,
    DenseI64ArrayAttr:$holder_offsets,
    DenseI64ArrayAttr:$holder_ranks,
    DenseI64ArrayAttr:$rows
  );
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The table in its plain-data form.
    ::reshard::PieceTable toTable();
    /// Creates the op for `table` of tensor `tensor`.
    static PiecesOp create(::mlir::OpBuilder &builder, ::mlir::Location loc,
                           ::llvm::StringRef tensor,
                           const ::reshard::PieceTable &table);
  }];
}

#endif // RESHARD_DIALECT_RESHARD_IR_RESHARDPLANOPS_TD
