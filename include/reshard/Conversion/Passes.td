//===- Passes.td - Conversions between reshard dialects -----*- tablegen -*-===//
#ifndef RESHARD_CONVERSION_PASSES_TD
#define RESHARD_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertReshardToRuntime
    : Pass<"convert-reshard-to-runtime", "mlir::ModuleOp"> {
  let summary = "Lower planned redistributions to per-rank reshard_rt programs";
  let description = [{
    Replaces the module's `reshard` ops (every redistribution must have its
    `reshard.pieces`; run the planning passes first) by one
    `reshard_rt.plan`: for every rank, its local copies as a table of copy
    descriptors, then per step one `reshard_rt.send` / `reshard_rt.recv` per
    peer, whose boxes, in canonical order (tensor, then piece), are packed
    into / unpacked from staging. Boxes are described by strided descriptors
    whose innermost contiguous dims are merged into one run. A relayed piece
    is packed by its relay from the relay's destination shard. Staging
    offsets are 16-byte aligned; a rank's workspace is its largest step.

    Input: a planned module (after `reshard-intersect`, and usually
    `reshard-select-sources` and `reshard-schedule`). Output:
    ```mlir
    reshard_rt.plan @refit num_ranks = 2 tensors = ["w"] fingerprint = ... {
      reshard_rt.rank 0 workspace = 16 shards = [0, 16, 0] {
        reshard_rt.step 0 {
          reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 16, 0]
        }
      }
      reshard_rt.rank 1 workspace = 16 shards = [0, 0, 16] {
        reshard_rt.step 0 {
          reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]
        }
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
