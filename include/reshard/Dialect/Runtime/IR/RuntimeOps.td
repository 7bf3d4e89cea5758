//===- RuntimeOps.td - Ops of the reshard_rt dialect --------*- tablegen -*-===//
#ifndef RESHARD_DIALECT_RUNTIME_IR_RUNTIMEOPS_TD
#define RESHARD_DIALECT_RUNTIME_IR_RUNTIMEOPS_TD

include "reshard/Dialect/Runtime/IR/RuntimeBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/SymbolInterfaces.td"

def Runtime_PlanOp : Runtime_Op<"plan",
    [Symbol, SymbolTable, NoTerminator, SingleBlock, IsolatedFromAbove]> {
  let summary = "A compiled redistribution plan: the programs of all ranks";
  let description = [{
    Holds one `reshard_rt.rank` per rank that appears in a mesh of the plan
    (a rank with nothing to do has an empty program, which still answers its
    shard sizes). Tensors
    are indexed in input order; the `shards` of each rank give the exact
    shard sizes the generated code checks its arguments against.
    `fingerprint` hashes the whole plan: generated code compares it across
    ranks before any byte moves. `staging_budget`, when present (set by
    `reshard-schedule`), bounds the message bytes (sends plus receives) of
    every rank in every step.

    ```mlir
    reshard_rt.plan @refit num_ranks = 4 tensors = ["w"]
        fingerprint = 1234 {
      reshard_rt.rank 0 workspace = 64 shards = [0, 64, 0] {
        reshard_rt.step 0 {
          reshard_rt.send to 2 bytes 64 staging 0
              pack = [0, 0, 0, 64, 0]
        }
      }
      ...
    }
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    I64Attr:$num_ranks,
    StrArrayAttr:$tensors,
    I64Attr:$fingerprint,
    OptionalAttr<I64Attr>:$staging_budget
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `num_ranks` `=` $num_ranks `tensors` `=` $tensors
    `fingerprint` `=` $fingerprint attr-dict-with-keyword $body
  }];
  let hasRegionVerifier = 1;
}

def Runtime_RankOp : Runtime_Op<"rank",
    [HasParent<"PlanOp">, NoTerminator, SingleBlock]> {
  let summary = "The program of one rank";
  let description = [{
    Local copies first (they need no staging and no peer), then the steps in
    order. `workspace` is the staging bytes the rank needs: the largest step's
    sends plus receives. `shards` lists (tensor, source bytes, destination
    bytes) for every tensor whose source or destination mesh holds the rank,
    ascending by tensor; -1 means the rank is not in that side's mesh (0 is
    an empty shard). Tensors not listed have neither. The list is sparse
    because a pipeline stage's rank is in few tensors' meshes: one entry per
    tensor and rank would make most of a whole-model plan.

    ```mlir
    // Tensor 0: a 64-byte source shard, not in the destination mesh;
    // tensor 2: both, the destination shard empty.
    reshard_rt.rank 3 workspace = 64 shards = [0, 64, -1, 2, 16, 0] { ... }
    ```
  }];
  let arguments = (ins
    I64Attr:$rank,
    I64Attr:$workspace,
    DenseI64ArrayAttr:$shards
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $rank `workspace` `=` $workspace `shards` `=` $shards
    attr-dict-with-keyword $body
  }];
  let extraClassDeclaration = [{
    /// Bytes of the rank's source (`src`) or destination shard of `tensor`;
    /// -1 when the rank is not in that side's mesh. `shards` must be sorted
    /// (the plan verifier checks it).
    int64_t getShardBytes(int64_t tensor, bool src);
    /// The flat tables of this rank's program, as the generated code and
    /// the execution engine (reshard::engine::RankProgram) read them.
    void encode(::llvm::SmallVectorImpl<int64_t> &shards,
                ::llvm::SmallVectorImpl<int64_t> &copies,
                ::llvm::SmallVectorImpl<int64_t> &steps);
  }];
}

def Runtime_CopyOp : Runtime_Op<"copy", [HasParent<"RankOp">]> {
  let summary = "Local copies of strided boxes, source shard to destination shard";
  let description = [{
    A table of copy descriptors (see the dialect description), executed in
    order before the first step.

    ```mlir
    // 4 rows of 16 bytes, source rows 32 bytes apart, destination packed.
    reshard_rt.copy [0, 0, 0, 16, 1, 4, 32, 16]
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$copies);
  let assemblyFormat = "$copies attr-dict";
}

def Runtime_StepOp : Runtime_Op<"step",
    [HasParent<"RankOp">, NoTerminator, SingleBlock]> {
  let summary = "One step: messages that may be in flight together";
  let description = [{
    All sends are packed into staging, all receives and sends are posted as
    one group (an NCCL group, or nonblocking MPI operations), and the
    receives are unpacked when all have completed. Every rank runs the same
    step indices in the same order.
  }];
  let arguments = (ins I64Attr:$index);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$index attr-dict-with-keyword $body";
}

def Runtime_SendOp : Runtime_Op<"send", [HasParent<"StepOp">]> {
  let summary = "Pack boxes into staging and send them to a peer as one message";
  let description = [{
    `pack` is a table of box descriptors; their bytes, in order, make the
    message of `bytes` bytes at `staging` in the workspace.
  }];
  let arguments = (ins
    I64Attr:$peer,
    I64Attr:$bytes,
    I64Attr:$staging,
    DenseI64ArrayAttr:$pack
  );
  let assemblyFormat = [{
    `to` $peer `bytes` $bytes `staging` $staging `pack` `=` $pack attr-dict
  }];
}

def Runtime_RecvOp : Runtime_Op<"recv", [HasParent<"StepOp">]> {
  let summary = "Receive one message from a peer into staging and unpack it";
  let description = [{
    `unpack` is a table of box descriptors into destination shards; the
    message's bytes, in order, fill them.
  }];
  let arguments = (ins
    I64Attr:$peer,
    I64Attr:$bytes,
    I64Attr:$staging,
    DenseI64ArrayAttr:$unpack
  );
  let assemblyFormat = [{
    `from` $peer `bytes` $bytes `staging` $staging `unpack` `=` $unpack
    attr-dict
  }];
}

#endif // RESHARD_DIALECT_RUNTIME_IR_RUNTIMEOPS_TD
