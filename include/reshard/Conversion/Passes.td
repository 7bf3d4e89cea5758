//===- Passes.td - Conversions between reshard dialects -----*- tablegen -*-===//
#ifndef RESHARD_CONVERSION_PASSES_TD
#define RESHARD_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertReshardToRuntime
    : Pass<"convert-reshard-to-runtime", "mlir::ModuleOp"> {
  let summary = "Lower a planned module to a compact reshard_rt plan";
  let description = [{
    Replaces the module's `reshard` ops (every redistribution must be in a
    `reshard.group`; run `reshard-plan-pipeline` or the planning passes
    first) by one `reshard_rt.plan`: the meshes; each class with its pieces
    as strided box descriptors (innermost contiguous dims merged into one
    run); the groups; one item list per stream (everything one rank sends
    another in one phase, in the order reshard-schedule gives it:
    enumeration order, group, piece, destination, with what a holder's
    receiver forwards first and a relay's in arrival order);
    and per rank its local copies, its sends and its receives, each stream
    with the start and quota `reshard-schedule` gave it (without a
    schedule, phase 0 whole in step 0 and relays whole in step 1). A
    relayed piece is packed by its relay from the relay's destination
    shard. Staging offsets are 16-byte aligned; a rank's workspace is its
    largest step. Nothing is written per piece of a tensor.

    Output:
    ```mlir
    reshard_rt.plan @refit num_ranks = 2 tensors = ["w"] fingerprint = ... {
      reshard_rt.mesh 0 ranks [0]
      reshard_rt.mesh 1 ranks [1]
      reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]]
          dst combos [0] shapes [[4]] {
        reshard_rt.piece dst 0 src 0 size [4] at [0] from [0]
            pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
      }
      reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
      reshard_rt.items 0 [g0.p0[0]]
      reshard_rt.rank 0 workspace = 16 {
        reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
      }
      reshard_rt.rank 1 workspace = 16 {
        reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
      }
    }
    ```
  }];
  let options = [
    Option<"planName", "plan-name", "std::string", /*default=*/"\"\"",
           "Name of the plan (a C identifier; the C functions are "
           "<name>_run etc.); default: the module's name, else reshard_plan">
  ];
  let dependentDialects = ["::reshard::rt::RuntimeDialect"];
}

#endif // RESHARD_CONVERSION_PASSES_TD
