//===- Passes.td - Passes over the reshard dialect ----------*- tablegen -*-===//
#ifndef RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_TD
#define RESHARD_DIALECT_RESHARD_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ReshardQuantize : Pass<"reshard-quantize", "mlir::ModuleOp"> {
  let summary = "Decide where each quantized destination is quantized, and give its scales a tensor";
  let description = [{
    For every redistribution whose destination is quantized
    (docs/Layout.md "Quantized destinations"), decides where the values
    are quantized and makes the scales a redistribution of their own, so
    that the planning passes move payload and scales like any other
    tensors and count the bytes that really cross:

    - **On the sender** when every source device holds whole blocks (its
      shard boundaries fall on block boundaries along every blocked dim):
      each holder quantizes its source shard before the first step, so the
      FP8 payload (one byte per element) and the scales travel. The op
      gets `quantize_on = "sender"`, and a new `@"<name>.scale"`
      redistribution (fp32 for block scaling, ui8 E8M0 for MX) moves the
      scale tensor from the source's sharding to the destination's, both
      divided by the block sizes; it is marked `scales_of = @<name>`.
    - **On the receiver** otherwise (a source device cuts a block): the
      op gets `quantize_on = "receiver"` and moves at full precision into
      a shadow of each destination shard, which each receiver quantizes
      after the last step (the destination holds whole blocks, by the
      verifier's alignment rule). `@"<name>.scale"` is then an identity
      on the destination mesh (from and to its scale sharding), which
      moves nothing.

    Runs first in `reshard-plan-pipeline`; ops already decided are left
    as they are.

    Input:
    ```mlir
    reshard.redistribute @w from @a <[[tp], []]>
        to @b <[[], [tp]] quant block [128, 128]>
        : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>
    ```
    Output:
    ```mlir
    reshard.redistribute @w from @a <[[tp], []]>
        to @b <[[], [tp]] quant block [128, 128]>
        : tensor<256x512xbf16> -> tensor<256x512xf8E4M3FN>
        {quantize_on = "sender"}
    reshard.redistribute @w.scale from @a <[[tp], []]> to @b <[[], [tp]]>
        : tensor<2x4xf32> -> tensor<2x4xf32> {scales_of = @w}
    ```
  }];
  let dependentDialects = ["::reshard::ReshardDialect"];
}

def ReshardIntersect : Pass<"reshard-intersect", "mlir::ModuleOp"> {
  let summary = "Compute the classes and groups of every redistribution, and their pieces";
  let description = [{
    Sorts the module's redistributions into classes (the same global shape,
    element type, both shardings and both mesh shapes) and groups (one
    class between the same two meshes), and computes each class's pieces
    once, in mesh coordinates: every destination combo's shard split into
    boxes where the source partition changes combos (`reshard.class`).
    Each group (`reshard.group`) lists its tensors; it is not routed yet,
    so it moves as the `direct` plan would (a local copy where the
    destination holds a piece, else its lowest holder). Work is per dim on
    intervals and per class: it grows with classes and their pieces, never
    with elements, ranks or the tensors of a class.

    Input:
    ```mlir
    reshard.mesh @a shape = [2] axes = ["tp"] ranks = [0, 1]
    reshard.mesh @b shape = [2] axes = ["tp"] ranks = [2, 3]
    reshard.redistribute @w from @a <[[tp], []]> to @b <[[], [tp]]>
        : tensor<4x4xf32> -> tensor<4x4xf32>
    ```
    Output (after the layout):
    ```mlir
    reshard.class @class0 of @w rank 2 [
      box [0, 0] size [2, 2] dst 0 at [0, 0] src 0 at [0, 0],
      box [2, 0] size [2, 2] dst 0 at [2, 0] src 1 at [0, 0],
      box [0, 2] size [2, 2] dst 1 at [0, 0] src 0 at [0, 2],
      box [2, 2] size [2, 2] dst 1 at [2, 0] src 1 at [0, 2]
    ]
    reshard.group @group0 class @class0 from @a to @b tensors [@w]
    ```
    `--reshard-expand` writes the same pieces as explicit per-tensor tables.
  }];
  let dependentDialects = ["::reshard::ReshardDialect"];
}

def ReshardSelectSources : Pass<"reshard-select-sources", "mlir::ModuleOp"> {
  let summary = "Choose who sends every piece, crossing the network once per NVLink domain";
  let description = [{
    Routes every group, for the whole module at once:

    - a local copy when the destination holds the piece;
    - else a holder in the destination's NVLink domain (over NVLink),
      spreading such sends over the domain's holders;
    - else one network crossing per destination NVLink domain: the
      destinations of a domain that need the same piece share it. It enters
      the domain at the one of them whose NIC has received least so far,
      and is forwarded from there over NVLink (a relay). It leaves from the
      holder whose NIC has sent least so far, so every data-parallel
      replica of the source carries a share.

    Decisions are made per group piece, largest first (longest processing
    time first), in input order on ties, so the result does not depend on
    threads or hash order; the members of a group rotate over the
    candidates from the chosen one on. Network bytes then equal the lower
    bound: every element needed in a domain that no source rank of the
    domain holds crosses into it once. The decisions are the group's
    `routes`; a schedule made before is dropped (its streams change).

    Relay trees (`relay-tree`, docs/Routing.md): a destination domain may
    get a piece from another destination domain's entries instead of its
    holders (`from domain F` on the route), so that the holders' domain
    sends it once: `bound` where the holders' NICs would pass the physical
    bound per NIC, `always` wherever the feeder's entries are less loaded,
    `never`; `auto` (default) as `bound` unless the plan would then have
    more than `relay-tree-max-streams` streams with relay lanes: then the
    holders of a domain, or of two, share a lane (the module attribute
    `reshard.relay_lane_span`), else the tree is dropped; a remark says
    which.

    `strategy=direct` instead takes a local copy or the lowest holder, with
    no balancing and no relay: the `direct` baseline (reshard-schedule's
    `transits=auto` then adds no transits either, so the plan is the
    report's `direct` figures; `transits=always` stands). The `gather-broadcast`
    baseline is not a strategy (`strategy=gather-broadcast` is refused with
    a message saying so): `reshard-report` prints its figures beside the
    plan's.

    Example: ranks 2 and 3 (one domain of 4) need the same piece, held only
    by ranks 8 and 9 (another domain); it crosses once, from 8 into 2, and 2
    forwards it to 3:
    ```mlir
    reshard.group @group0 class @class0 from @a to @b tensors [@w]
        routing balanced
    ```
    and `--reshard-expand` shows
    ```mlir
    box [0] size [4] from 8 at [0] to 2 at [0] group 0,
    box [0] size [4] from 8 at [0] to 3 at [0] group 0 via 2 step 1
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "::reshard::SourceStrategy",
           /*default=*/"::reshard::SourceStrategy::Balanced",
           "How senders are chosen",
           [{::reshard::sourceStrategyValues()}]>,
    Option<"relayTree", "relay-tree", "::reshard::RelayTree",
           /*default=*/"::reshard::RelayTree::Auto",
           "Whether a domain may get a piece from another domain's entries",
           [{::reshard::relayTreeValues()}]>,
    Option<"relayTreeMaxStreams", "relay-tree-max-streams", "int64_t",
           /*default=*/"::reshard::kRelayTreeMaxStreams",
           "With relay-tree=auto, the most streams a plan with a relay tree "
           "may have (default 270000)">
  ];
  let dependentDialects = ["::reshard::ReshardDialect"];
}

def ReshardSchedule : Pass<"reshard-schedule", "mlir::ModuleOp"> {
  let summary = "Give every stream a start step and a quota within a staging budget";
  let description = [{
    Everything one rank sends another in one phase is one stream (phase 0
    from holders' source shards, phase 1 what a relay forwards from its
    destination shards). With relay lanes a relay forwards what each holder
    r sent it in a stream of its own, phase 1 + r (r the first rank of the
    holder's block where the module's `reshard.relay_lane_span` shares
    lanes between holders), which runs at that
    holder's stream's pace a step or two behind it, instead of forwarding
    the pieces of many holders one after another while they arrive in
    parallel. The pass schedules without lanes, and when the relays then
    run more than 1% of the steps past the last phase-0 step, schedules
    with lanes too and keeps them if the cost model's time is more than
    1% shorter (`relay_lanes` on the schedule; the report says so): lanes
    cost plan size (a relay transfer per holder). A plan with a relay tree
    is scheduled with lanes (without, where they do not fit): a feeder's
    entry forwards what many holders send it at once, and a fed domain's
    entry forwards those members in lanes of their own, 1 + R + r (R the
    rank count). A holder's stream lists first what its receiver forwards
    to another domain, then what it forwards within its own, so that
    relays can follow from the first steps. This pass gives each
    stream a start step and a
    quota of bytes per step such that, on every rank and at every instant,
    the staged bytes stay within `staging-budget`: a step's sends and
    receives, a transit's carry and, with `receives-ahead`, the next step's
    receives (the MPI backend then posts them while a step is in flight). The distinct peers sent to
    plus received from in a step stay within `max-ops-per-step` (one NCCL
    group per step).

    When no rank is in more streams than `max-ops-per-step`, all streams
    run at once at one pace: each moves ceil(bytes / N) a step, N being the
    least step count at which every rank's quotas add up to at most the
    budget B, a transit's receive twice (with its carry) and, with
    `receives-ahead`, every receive once more (at most T_x / B rounded up
    plus a little for rounding, T_x the bytes of rank x's streams so
    weighted), so every rank moves 1/N of its bytes in every step. A relay's stream lists its
    items in the order what they forward arrives and starts at the first
    step where each item follows that arrival. Otherwise (or when a rank
    has as many streams as budget bytes) a rank with K streams runs at
    most C = min(K, max-ops-per-step, B') of them at once, each with
    floor(B' / max(C_sender, C_receiver)) bytes a step, B' = B (B / 2 with
    `receives-ahead`: a step's messages take at most half the budget, the
    next step's receives the rest), placed longest
    first at the earliest step where both ends have room, and a relay's
    streams start after its last step of phase-0 receives. A stream's bytes
    are cut into steps at any byte, so a piece larger than the budget
    simply spans steps. Local copies use no staging.

    Transits: a holder's stream to another NVLink domain may pass through
    a third GPU of either domain, which takes it in on its NIC and
    forwards it over NVLink (entry), or takes it over NVLink and sends it
    on its NIC (exit), so that a domain's traffic spreads over the NICs of
    all its plan GPUs (`reshard::balanceNics`: while the busiest NIC of a
    domain carries a stream of its own whose move would leave it and the
    least loaded NIC both below its load, one such stream moves: within
    the domain's mean if one fits, the one whose other end has had the
    fewest moves, then the largest within the mean, else the smallest;
    the relay tree's crossings count on their NICs).
    The stream becomes two with the same items, sender -> via in phase
    2^31 + receiver and via -> receiver in phase 2^32 + sender, one step
    later at the same quota; `via` keeps one step's slice in its workspace
    (within the staging budget). With `transits=auto` the pass keeps them
    when the cost model's time is more than 1% shorter (`transits` on the
    schedule; the report counts them), except in a module whose groups are
    all routed `direct` (the direct plan); they need the one-pace
    schedule.

    The result is the module's `reshard.schedule` op, which the lowering
    carries into the runtime program, whose verifier holds every step to the
    budget and the bound.

    ```mlir
    // staging-budget=64 on a 32 x f32 piece from rank 0 to rank 1:
    reshard.schedule staging_budget = 64 max_ops_per_step = 1024 [
      stream 0 -> 1 phase 0 start 0 quota 64
    ]
    // two steps of 64 bytes each; with receives-ahead=true four of 32:
    // rank 1 then stages a step's 32 bytes and the next step's at once
    ```
  }];
  let options = [
    Option<"stagingBudget", "staging-budget", "int64_t",
           /*default=*/"::reshard::kDefaultStagingBudget",
           "Staging bytes a rank holds at any instant (a step's sends and receives, the next step's receives and what a transit keeps); default 1 GiB">,
    Option<"maxOpsPerStep", "max-ops-per-step", "int64_t", /*default=*/"1024",
           "Point-to-point operations per rank and step (one NCCL group)">,
    Option<"transits", "transits", "::reshard::TransitMode",
           /*default=*/"::reshard::TransitMode::Auto",
           "Holder streams through another GPU of a domain",
           [{::reshard::transitModeValues()}]>,
    Option<"receivesAhead", "receives-ahead", "bool", /*default=*/"false",
           "The MPI backend posts each step's next receives while the step is in flight (the budget counts them: more steps at one budget)">
  ];
  let dependentDialects = ["::reshard::ReshardDialect"];
}

def ReshardExpand : Pass<"reshard-expand", "mlir::ModuleOp"> {
  let summary = "Write every tensor's pieces as an explicit table";
  let description = [{
    The enumerating reference path: replaces the classes, groups and
    schedule by one `reshard.pieces` table per tensor, with every piece's
    destination rank, its sender (as the group's routing chooses it for
    that tensor) and, for a relayed piece, its entry rank (`via`, step 1).
    The result is for reading and for `reshard-run`, whose piece
    interpreter checks it element by element; the planning passes and the
    lowering do not take it.

    ```mlir
    reshard.pieces @w rank 2 holders [[0], [1]] [
      box [0, 0] size [2, 2] from 0 at [0, 0] to 2 at [0, 0] group 0,
      ...
    ]
    ```
  }];
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
    computed from the same pieces, with the ratios; how many classes,
    groups and pieces the plan has; and per tensor class the bytes that
    reach destinations by each route (local copy, NVLink or network from a
    holder, through a transit, relayed by an entry, from another domain's
    entry). The IR is unchanged.

    The module must be planned (every redistribution in a
    `reshard.group`): plan it first with `reshard-plan-pipeline` (with
    `lower=false`) or the individual passes. An unrouted group is reported
    as the direct plan, an unscheduled plan in its trivial schedule (phase
    0 in step 0, relays in step 1). A lowered plan (`reshard_rt`) is
    refused. `--reshard-report=json` and
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
