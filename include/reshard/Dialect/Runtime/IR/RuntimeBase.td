//===- RuntimeBase.td - The reshard_rt runtime dialect ------*- tablegen -*-===//
#ifndef RESHARD_DIALECT_RUNTIME_IR_RUNTIMEBASE_TD
#define RESHARD_DIALECT_RUNTIME_IR_RUNTIMEBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"

def Runtime_Dialect : Dialect {
  let name = "reshard_rt";
  let cppNamespace = "::reshard::rt";
  let summary = "Compact runtime programs of a redistribution plan";
  let description = [{
    A lowered plan, in the terms the generated code runs: meshes (rank
    lists), tensor classes with their pieces as strided box descriptors,
    groups (the tensors of one class between two meshes), item lists (one
    piece of an arithmetic progression of a group's members), and per rank
    its local copies and its streams: everything it sends one peer, or
    receives from one peer, in one phase, cut into steps of `quota` bytes.
    Nothing is stored per piece of a tensor: a plan's size grows with its
    classes, groups and streams.

    The tables are those of `reshard::engine::Plan`
    (include/reshard/ExecutionEngine/PlanTables.h), the one owner of their
    schema: the verifier checks the plan on that view, the C++ emitter
    writes it, and the in-process executor and both backends run it.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Runtime_Op<string mnemonic, list<Trait> traits = []>
    : Op<Runtime_Dialect, mnemonic, traits>;

class Runtime_Attr<string name, string attrMnemonic>
    : AttrDef<Runtime_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Runtime_BoxAttr : Runtime_Attr<"Box", "box"> {
  let summary = "A strided box of bytes in one shard";
  let description = [{
    The byte offset of the box's first element, the bytes of one contiguous
    run, and outer loops, outermost first, of `count` runs `stride` bytes
    apart. The box's bytes in packed order are its runs in loop order.

    ```mlir
    // 32 runs of 64 bytes, 256 bytes apart, from byte 1024.
    #reshard_rt.box<+1024 run 64 x [32 by 256]>
    ```
  }];
  let parameters = (ins
    "int64_t":$offset,
    "int64_t":$run,
    ArrayRefParameter<"int64_t", "(count, stride) pairs">:$loops
  );
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The descriptor as the engine stores it: offset, run, n, loops.
    ::llvm::SmallVector<int64_t> descriptor() const;
  }];
}

def Runtime_CopyAttr : Runtime_Attr<"Copy", "copy"> {
  let summary = "A strided box copied from a source shard to a destination shard";
  let description = [{
    The box at its source and destination offsets, with one run length and
    outer loops of `count` runs at a source and a destination stride.

    ```mlir
    #reshard_rt.copy<+64 -> +0 run 32 x [4 by 128 -> 32]>
    ```
  }];
  let parameters = (ins
    "int64_t":$srcOffset,
    "int64_t":$dstOffset,
    "int64_t":$run,
    ArrayRefParameter<"int64_t", "(count, src stride, dst stride)">:$loops
  );
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The descriptor as the engine stores it: src offset, dst offset, run,
    /// n, loops.
    ::llvm::SmallVector<int64_t> descriptor() const;
  }];
}

#endif // RESHARD_DIALECT_RUNTIME_IR_RUNTIMEBASE_TD
