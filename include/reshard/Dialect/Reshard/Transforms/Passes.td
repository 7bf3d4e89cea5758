//===- Passes.td - Passes over the reshard dialect ----------*- tablegen -*-===//
#ifndef RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_TD
#define RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ReshardIntersect : Pass<"reshard-intersect", "mlir::ModuleOp"> {
  let summary = "Compute the exact pieces of every redistribution";
  let description = [{
    For every `reshard.redistribute` that has no `reshard.pieces` yet, adds
    one right after it: every destination rank's shard split into boxes where
    the source partition changes holders, each with the source ranks that
    hold it. A destination rank that holds a box itself copies it locally;
    otherwise the box comes from its lowest holder (`reshard-select-sources`
    balances that choice later). Work is per dim on intervals: it grows with
    the number of pieces, never with elements or with source x destination
    ranks. Tensors are intersected in parallel.

    Input:
    ```mlir
    reshard.mesh @a shape = [2] axes = ["tp"] ranks = [0, 1]
    reshard.mesh @b shape = [2] axes = ["tp"] ranks = [2, 3]
    reshard.redistribute @w from @a <[[tp], []]> to @b <[[], [tp]]>
        : tensor<4x4xf32> -> tensor<4x4xf32>
    ```
    Output (after the redistribute):
    ```mlir
    reshard.pieces @w rank 2 holders [[0], [1]] [
      box [0, 0] size [2, 2] from 0 at [0, 0] to 2 at [0, 0] group 0,
      box [2, 0] size [2, 2] from 1 at [0, 0] to 2 at [2, 0] group 1,
      box [0, 2] size [2, 2] from 0 at [0, 2] to 3 at [0, 0] group 0,
      box [2, 2] size [2, 2] from 1 at [0, 2] to 3 at [2, 0] group 1
    ]
    ```
  }];
  let dependentDialects = ["::reshard::ReshardDialect"];
}

def ReshardSelectSources : Pass<"reshard-select-sources", "mlir::ModuleOp"> {
  let summary = "Choose who sends every piece, crossing the network once per NVLink domain";
  let description = [{
    Decides, for the whole module at once, the sender of every piece:

    - the destination itself when it holds the box (a local copy);
    - else a holder in the destination's NVLink domain (over NVLink),
      spreading such sends over the domain's holders;
    - else one network crossing per destination NVLink domain: the
      destinations of a domain that need the same box share it. It enters
      the domain at the one of them whose NIC has received least so far,
      and is forwarded from there over NVLink (`via`, one step later). It
      leaves from the holder whose NIC has sent least so far, so every
      data-parallel replica of the source carries a share.

    Decisions are made largest first (longest processing time first), in
    input order on ties, so the result does not depend on threads or hash
    order. Network bytes then equal the lower bound: every element needed in
    a domain that no source rank of the domain holds crosses into it once.

    `strategy=direct` instead takes a local copy or the lowest holder, with
    no balancing and no relay: the `direct` baseline.

    The plan stays executable: direct sends in step 0, forwards in step 1
    (`reshard-schedule` refines this). The `gather-broadcast` baseline is
    not a strategy: `reshard-report` prints its figures beside the plan's.

    Example: rank 2 and 3 (one domain of 4) need the same box held only by
    ranks 8 and 9 (another domain); after selection one crossing from 8 into
    2, forwarded to 3:
    ```mlir
    box [0] size [4] from 8 at [0] to 2 at [0] group 0,
    box [0] size [4] from 8 at [0] to 3 at [0] group 0 via 2 step 1
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "::reshard::SourceStrategy",
           /*default=*/"::reshard::SourceStrategy::Balanced",
           "How senders are chosen",
           [{::llvm::cl::values(
               clEnumValN(::reshard::SourceStrategy::Balanced, "balanced",
                          "local, then NVLink, then one network crossing "
                          "per NVLink domain from the least loaded NIC "
                          "(default)"),
               clEnumValN(::reshard::SourceStrategy::Direct, "direct",
                          "the baseline: lowest holder, no relay"))}]>
  ];
  let dependentDialects = ["::reshard::ReshardDialect"];
}

def ReshardSchedule : Pass<"reshard-schedule", "mlir::ModuleOp"> {
  let summary = "Assign steps within a staging budget and an operation bound";
  let description = [{
    Every transfer between two ranks is packed into the sender's staging
    memory and received into the receiver's. This pass splits pieces larger
    than the staging budget along their outer dims and assigns each
    transfer a step such that, on every rank and in every step, staged
    sends plus receives stay within `staging-budget` bytes and the distinct
    peers sent to plus received from stay within `max-ops-per-step` (one
    NCCL group per step). A relay forwards a box only in a step after the
    one in which it received it. Local copies use no staging (step 0).

    Transfers are placed first fit, largest first. Messages are formed
    later, one per (step, sender, receiver) across all tensors, so many
    small tensors cost one message per peer and step. The budget is recorded
    on the module as the dialect attribute `reshard.staging_budget`, and the
    lowering carries it into the runtime program, whose verifier holds every
    step to it.

    ```mlir
    // staging-budget=64 on a 32 x f32 piece: two pieces of 16 elements.
    box [0] size [16] from 0 at [0] to 1 at [0] group 0,
    box [16] size [16] from 0 at [16] to 1 at [16] group 0 step 1
    ```
  }];
  let options = [
    Option<"stagingBudget", "staging-budget", "int64_t",
           /*default=*/"::reshard::kDefaultStagingBudget",
           "Staging bytes per rank and step (sends plus receives); default 1 GiB">,
    Option<"maxOpsPerStep", "max-ops-per-step", "int64_t", /*default=*/"1024",
           "Point-to-point operations per rank and step (one NCCL group)">
  ];
  let dependentDialects = ["::reshard::ReshardDialect"];
}

def ReshardReport : Pass<"reshard-report", "mlir::ModuleOp"> {
  let summary = "Print bytes per link class, the lower bounds and the estimated time";
  let description = [{
    Prints, for the plan as it stands, per rank and per link class (local
    copy, NVLink, network) the bytes and messages sent and received; the
    busiest NIC in and out; `network_bytes` against
    `lower_bound_network_bytes`; `estimated_seconds` from the latency and
    bandwidth model of docs/CostModel.md against `lower_bound_seconds`; and
    the same figures for the `gather-broadcast` and `direct` baselines,
    computed from the same pieces, with the ratios. The IR is unchanged.

    The module must be planned (every redistribution has its
    `reshard.pieces`): plan it first with `reshard-plan-pipeline` (with
    `lower=false`) or the individual passes. A lowered plan (`reshard_rt`)
    has no pieces left and is refused too. `--reshard-report=json` and
    `--reshard-report=text` are short for `format=json` and `format=text`.

    The report goes to `output` (a file, `-` for standard output), or to
    the stream the pass was created with (`createReshardReportPass`).
    Reports of nested modules are written whole, one after the other. When
    a report went to standard output and the IR would go there too (no
    `-o FILE`), reshard-opt prints the report alone.

    ```
    reshard-opt layout.json --reshard-plan-pipeline=lower=false \
        --reshard-report=json -o /dev/null > report.json
    reshard-opt plan.mlir --reshard-intersect --reshard-select-sources \
        --reshard-schedule --reshard-report=format=json -o /dev/null
    ```
  }];
  let options = [
    Option<"format", "format", "::reshard::ReportFormat",
           /*default=*/"::reshard::ReportFormat::Text", "Report format",
           [{::llvm::cl::values(
               clEnumValN(::reshard::ReportFormat::Text, "text",
                          "tables for people (default)"),
               clEnumValN(::reshard::ReportFormat::Json, "json",
                          "one JSON object (docs/CostModel.md)"))}]>,
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "File to write the report to ('-': standard output)">,
    Option<"perRank", "per-rank", "bool", /*default=*/"true",
           "Include the per-rank table">
  ];
  let dependentDialects = ["::reshard::ReshardDialect"];
}

#endif // RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_TD
