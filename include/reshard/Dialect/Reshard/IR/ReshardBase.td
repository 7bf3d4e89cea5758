//===- ReshardBase.td - The reshard dialect -----------------*- tablegen -*-===//
#ifndef RESHARD_DIALECT_RESHARD_IR_RESHARDBASE_TD
#define RESHARD_DIALECT_RESHARD_IR_RESHARDBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Reshard_Dialect : Dialect {
  let name = "reshard";
  let cppNamespace = "::reshard";
  let summary = "Source and destination shardings of tensor redistributions";
  let description = [{
    The `reshard` dialect states *what* must move, never *how*: device meshes
    and a topology as symbols, and one `reshard.redistribute` per tensor that
    names its global shape and element type, a source mesh and sharding, and a
    destination mesh and sharding. A module may hold every tensor of a model.

    The layout semantics are those of docs/Layout.md: a dim sharded over
    mesh axes `(a1, ..., am)` is split as nested `torch.chunk` (chunks of
    `ceil(n / |a|)`, the last ones short or empty), blocks are chunked one by
    one and concatenated per device, and axes that shard no dim replicate.
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
  }];
}

class Reshard_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Reshard_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class Reshard_Op<string mnemonic, list<Trait> traits = []>
    : Op<Reshard_Dialect, mnemonic, traits>;

#endif // RESHARD_DIALECT_RESHARD_IR_RESHARDBASE_TD
