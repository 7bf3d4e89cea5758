//===- RuntimeBase.td - The reshard_rt runtime dialect ------*- tablegen -*-===//
#ifndef RESHARD_DIALECT_RUNTIME_IR_RUNTIMEBASE_TD
#define RESHARD_DIALECT_RUNTIME_IR_RUNTIMEBASE_TD

include "mlir/IR/OpBase.td"

def Runtime_Dialect : Dialect {
  let name = "reshard_rt";
  let cppNamespace = "::reshard::rt";
  let summary = "Per-rank runtime programs of a redistribution plan";
  let description = [{
    What each rank does, step by step: local copies of strided boxes, and per
    step one message per peer, packed from strided boxes into staging memory
    (the workspace) and unpacked from it. Per-box data lives in dense
    descriptor tables; there is one op per message, never one per piece.

    A *box descriptor* is a flat run of integers:
    `[tensor, buffer, offset, run, n, count_1, stride_1, ..., count_n,
    stride_n]`: the tensor's index in the plan, `buffer` 0 for its source
    shard and 1 for its destination shard, the byte offset of the first
    element, the bytes of one contiguous run, and `n` outer loops (outermost
    first) of `count` runs `stride` bytes apart. A *copy descriptor* is
    `[tensor, src_offset, dst_offset, run, n, (count, src_stride,
    dst_stride) x n]`.
  }];
}

class Runtime_Op<string mnemonic, list<Trait> traits = []>
    : Op<Runtime_Dialect, mnemonic, traits>;

#endif // RESHARD_DIALECT_RUNTIME_IR_RUNTIMEBASE_TD
