// RUN: reshard-opt %s -split-input-file -verify-diagnostics --allow-unregistered-dialect

// Every error of the reshard_rt verifier, one case per branch: the
// encoding of the ops into engine tables (lib/Dialect/Runtime/IR/
// PlanEncoding.cpp: order, numbering, ranges, receives matched to sends),
// the plan-level checks on those tables (PlanChecks.cpp: holders,
// exactly-once over member progressions, relays, staging budget,
// operations per step, workspace), and the per-op verifiers and parsers
// (RuntimeOps.cpp). Most cases edit one of two small plans that verify:
//   - one tensor, rank 0 sends its 4 x f32 to rank 1 (16 B, one step);
//   - two tensors of one class (one group of two members), rank 0 sends
//     both to rank 1 (32 B in step 0), which relays them to rank 2, its
//     replica, in step 1 (phase 1).

// Num_ranks out of range.
// expected-error @+1 {{'reshard_rt.plan' op num_ranks 0 must be in [1, 2^24]}}
reshard_rt.plan @p num_ranks = 0 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// Num_ranks above 2^24.
// expected-error @+1 {{'reshard_rt.plan' op num_ranks 16777217 must be in [1, 2^24]}}
reshard_rt.plan @p num_ranks = 16777217 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// A class before a mesh.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  // expected-error @+1 {{'reshard_rt.mesh' op comes after the plan's classes; a plan lists meshes, classes, groups, item lists, then ranks}}
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// Misnumbered mesh.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  // expected-error @+1 {{'reshard_rt.mesh' op is numbered 2 but is meshes entry 1; number them in order}}
  reshard_rt.mesh 2 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// Misnumbered item list.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  // expected-error @+1 {{'reshard_rt.items' op is numbered 3 but is item lists entry 0; number them in order}}
  reshard_rt.items 3 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A mesh rank outside the plan.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  // expected-error @+1 {{'reshard_rt.mesh' op lists rank 2 outside the 2 ranks of the plan}}
  reshard_rt.mesh 1 ranks [2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// A group naming a tensor the plan does not have.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  // expected-error @+1 {{'reshard_rt.group' op lists tensor 1 of the 1 of the plan}}
  reshard_rt.group 0 class 0 from 0 to 1 tensors [1]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A tensor in two groups.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  // expected-note @+1 {{the other group}}
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  // expected-error @+1 {{'reshard_rt.group' op lists tensor 1 ('w1'), which group 0 lists too}}
  reshard_rt.group 1 class 0 from 0 to 1 tensors [1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 1 quota 32 bytes 32 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 1 start 1 quota 32 bytes 32 items 1
  }
}

// -----

// One group lists a tensor twice (the encoder's note once pointed at the
// group being read, not yet recorded, and crashed).
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  // expected-error @+1 {{'reshard_rt.group' op lists tensor 1 ('w1') twice; a group lists each member once}}
  reshard_rt.group 0 class 0 from 0 to 1 tensors [1, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
}

// -----

// A rank outside the plan.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  // expected-error @+1 {{'reshard_rt.rank' op is rank 2 of a plan of 2 ranks}}
  reshard_rt.rank 2 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// Ranks out of order.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
  // expected-error @+1 {{'reshard_rt.rank' op follows rank 1; ranks are listed once each, ascending}}
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A missing item list.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    // expected-error @+1 {{'reshard_rt.send' op names item list 4 of 1}}
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 4
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A send to a rank outside the plan.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    // expected-error @+1 {{'reshard_rt.send' op sends to rank 5 of a plan of 2 ranks}}
    reshard_rt.send to 5 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A foreign op in the plan.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  // expected-error @+1 {{'test.foreign' op is not part of a reshard_rt.plan}}
  "test.foreign"() : () -> ()
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A receive without its send.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    // expected-error @+1 {{'reshard_rt.recv' op receives from rank 0 in phase 1, which sends nothing to rank 1 in that phase}}
    reshard_rt.recv from 0 phase 1 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A receive that differs from its send.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    // expected-note @+1 {{the send}}
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    // expected-error @+1 {{'reshard_rt.recv' op differs from the send it receives (start 0, quota 16, bytes 16, items 0); both ends must agree}}
    reshard_rt.recv from 0 phase 0 start 0 quota 8 bytes 16 items 0
  }
}

// -----

// A send nobody receives.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    // expected-error @+1 {{'reshard_rt.send' op is received by no reshard_rt.recv of rank 1}}
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
  }
}

// -----

// A group naming a missing class.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  // expected-error @+1 {{'reshard_rt.group' op names class 3 of 1}}
  reshard_rt.group 0 class 3 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A group naming a missing mesh.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  // expected-error @+1 {{'reshard_rt.group' op names mesh 2 of 2}}
  reshard_rt.group 0 class 0 from 0 to 2 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A mesh of another size than the class's.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2, 0]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  // expected-error @+1 {{'reshard_rt.group' op moves between meshes 0 and 1, but mesh 1 has 3 ranks where class 0 has 2 destination devices}}
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 1 quota 32 bytes 32 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 1 start 1 quota 32 bytes 32 items 1
  }
}

// -----

// A tensor in no group.
// expected-error @+1 {{'reshard_rt.plan' op tensor 1 ('orphan') is in no reshard_rt.group}}
reshard_rt.plan @p num_ranks = 2 tensors = ["w", "orphan"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// An item naming a missing group.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  // expected-error @+1 {{'reshard_rt.items' op item 0 names group 7 of 1}}
  reshard_rt.items 0 [g7.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// An item naming a missing piece.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  // expected-error @+1 {{'reshard_rt.items' op item 0 names piece 3 of class 0, which has 1}}
  reshard_rt.items 0 [g0.p3[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// An item past the group's members.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  // expected-error @+1 {{'reshard_rt.items' op item 0 reaches member 2 of group 0, which has 2}}
  reshard_rt.items 0 [g0.p0[0 x 3]]
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 1 quota 32 bytes 32 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 1 start 1 quota 32 bytes 32 items 1
  }
}

// -----

// A sender that does not hold the piece.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  // expected-error @+1 {{'reshard_rt.items' op item 0 is sent by rank 1 from its source shards, but rank 1 does not hold piece 0 of group 0 there}}
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 0 start 1 quota 32 bytes 32 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 0 start 1 quota 32 bytes 32 items 1
  }
}

// -----

// A receiver that does not need the piece.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [1]
  reshard_rt.mesh 1 ranks [0]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  // expected-error @+1 {{'reshard_rt.items' op item 0 is sent by rank 0 from its source shards, but rank 0 does not hold piece 0 of group 0 there}}
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// Stated bytes that are not the items'.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    // expected-error @+1 {{'reshard_rt.send' op states 20 bytes, but its items are 16 bytes}}
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 20 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 20 items 0
  }
}

// -----

// A local copy on a rank that does not hold the piece.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  // expected-error @+1 {{'reshard_rt.items' op item 0 is copied locally on rank 1, which does not hold piece 0 of group 0 in its source shards}}
  reshard_rt.items 1 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.copy items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A member that arrives twice.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  // expected-error @+1 {{'reshard_rt.items' op item 0 (with others) delivers piece 0 of tensor 'w1' (group 0, member 1) to rank 2 twice; each element arrives exactly once}}
  reshard_rt.items 1 [g0.p0[0 x 2], g0.p0[1]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 1 quota 32 bytes 48 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 1 start 1 quota 32 bytes 48 items 1
  }
}

// -----

// A member that never arrives.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  // expected-error @+1 {{'reshard_rt.items' op item 0 (with others) delivers piece 0 of group 0 to rank 2, but never for tensor 'w1' (member 1); each element arrives exactly once}}
  reshard_rt.items 1 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 1 quota 32 bytes 16 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 16 {
    reshard_rt.recv from 1 phase 1 start 1 quota 32 bytes 16 items 1
  }
}

// -----

// A destination that gets nothing.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  // expected-error @+1 {{'reshard_rt.group' op piece 0 of tensor 'w0' (member 0) never reaches rank 2; each element arrives exactly once}}
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
}

// -----

// A relay that starts with its receive.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  // expected-error @+1 {{'reshard_rt.items' op item 0 is relayed by rank 1 from step 0, but the rank receives members of it until step 0; a relay sends a byte only after it arrives (by the bound in docs/Runtime.md)}}
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 64 {
    reshard_rt.send to 2 phase 1 start 0 quota 32 bytes 32 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 1 start 0 quota 32 bytes 32 items 1
  }
}

// -----

// A relay of what its rank copied locally: the MPI backend runs local
// copies while the first step's messages move, so nothing copied is sent.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [1]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  // expected-error @+1 {{'reshard_rt.items' op item 0 is relayed by rank 1, which copies members of it locally; a relay forwards only what it receives (local copies run while the first step's messages move)}}
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.copy items 0
    reshard_rt.send to 2 phase 1 start 0 quota 32 bytes 32 items 1
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 1 start 0 quota 32 bytes 32 items 1
  }
}

// -----

// A relay of a member in the step it arrives (member 1 arrives in step 1).
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0], g0.p0[1]]
  // expected-error @+1 {{'reshard_rt.items' op item 0 is relayed by rank 1 from step 1, but the rank receives members of it until step 1; a relay sends a byte only after it arrives (by the bound in docs/Runtime.md)}}
  reshard_rt.items 1 [g0.p0[1], g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 1 quota 16 bytes 32 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 16 {
    reshard_rt.recv from 1 phase 1 start 1 quota 16 bytes 32 items 1
  }
}

// -----

// Cut through one step too early for the verifier's bound: the box arrives
// over steps 0-7, 8 bytes a step; relay-overlap.mlir forwards it from
// step 2.
reshard_rt.plan @p num_ranks = 3 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[16]] dst combos [0, 0] shapes [[16]] {
    reshard_rt.piece dst 0 src 0 size [16] at [0] from [0] pack <+0 run 64> unpack <+0 run 64> copy <+0 -> +0 run 64>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  // expected-error @+1 {{'reshard_rt.items' op item 0 is relayed by rank 1 from step 1, but the rank receives members of it until step 7; a relay sends a byte only after it arrives (by the bound in docs/Runtime.md)}}
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 8 bytes 64 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 1 quota 8 bytes 64 items 0
    reshard_rt.recv from 0 phase 0 start 0 quota 8 bytes 64 items 0
  }
  reshard_rt.rank 2 workspace = 16 {
    reshard_rt.recv from 1 phase 1 start 1 quota 8 bytes 64 items 0
  }
}

// -----

// A relay of what the relay never got.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  // expected-error @+1 {{'reshard_rt.items' op item 0 (with others) delivers piece 0 of group 0 to rank 1, but never for tensor 'w1' (member 1); each element arrives exactly once}}
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 1 quota 32 bytes 32 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 16 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 1 start 1 quota 32 bytes 32 items 1
  }
}

// -----

// A step over the staging budget.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 staging_budget = 8 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  // expected-error @+1 {{'reshard_rt.rank' op moves 16 bytes in step 0, over the staging budget of 8}}
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// Within the budget by its own messages, over it with the next step's
// receives, which a plan with receives_ahead stages while the step is in
// flight: rank 1 moves 8 + 8 bytes in step 0 and has step 1's 8 posted.
reshard_rt.plan @p num_ranks = 3 tensors = ["w", "b"] fingerprint = 0 staging_budget = 16 receives_ahead {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.mesh 2 ranks [2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.class 1 element_bytes 4 rank 1 src combos [0] shapes [[2]] dst combos [0] shapes [[2]] {
    reshard_rt.piece dst 0 src 0 size [2] at [0] from [0] pack <+0 run 8> unpack <+0 run 8> copy <+0 -> +0 run 8>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.group 1 class 1 from 1 to 2 tensors [1]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.items 1 [g1.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 8 bytes 16 items 0
  }
  // expected-error @+1 {{'reshard_rt.rank' op moves 16 bytes in step 0 while the next step's receives take 8, over the staging budget of 16}}
  reshard_rt.rank 1 workspace = 48 {
    reshard_rt.send to 2 phase 0 start 0 quota 8 bytes 8 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 8 bytes 16 items 0
  }
  reshard_rt.rank 2 workspace = 16 {
    reshard_rt.recv from 1 phase 0 start 0 quota 8 bytes 8 items 1
  }
}

// -----

// A step over the operation bound.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 max_ops_per_step = 1 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  reshard_rt.items 1 [g0.p0[0 x 2]]
  // expected-error @+1 {{'reshard_rt.rank' op posts 2 messages in step 0, over max_ops_per_step 1}}
  reshard_rt.rank 0 workspace = 64 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
    reshard_rt.send to 2 phase 0 start 0 quota 32 bytes 32 items 1
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 1
  }
}

// -----

// A stated workspace that is not the largest step.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  // expected-error @+1 {{'reshard_rt.rank' op states a workspace of 32 bytes; its largest step stages 16}}
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// With receives_ahead a step's staging holds the next step's receives too:
// rank 1 receives 16 bytes in steps 0 and 1, so step 0 stages 32.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 receives_ahead {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[8]] dst combos [0] shapes [[8]] {
    reshard_rt.piece dst 0 src 0 size [8] at [0] from [0] pack <+0 run 32> unpack <+0 run 32> copy <+0 -> +0 run 32>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 32 items 0
  }
  // expected-error @+1 {{'reshard_rt.rank' op states a workspace of 16 bytes; its largest step stages 32 with the next step's receives}}
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 32 items 0
  }
}

// -----

// A mesh listing a rank twice.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  // expected-error @+1 {{'reshard_rt.mesh' op lists rank 1 twice}}
  reshard_rt.mesh 1 ranks [1, 1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 1 quota 32 bytes 32 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 1 start 1 quota 32 bytes 32 items 1
  }
}

// -----

// A mesh without ranks.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  // expected-error @+1 {{'reshard_rt.mesh' op has no ranks}}
  reshard_rt.mesh 1 ranks []
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// A class of element size 0.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  // expected-error @+1 {{'reshard_rt.class' op element_bytes 0 must be positive}}
  reshard_rt.class 0 element_bytes 0 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// A class whose device maps to a missing combo.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  // expected-error @+1 {{'reshard_rt.class' op maps a source device to combo 1 of 1}}
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [1] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// A class with a shard over 2^63 bytes.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  // expected-error @+1 {{'reshard_rt.class' op has a shard whose bytes overflow 64 bits}}
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4611686018427387904]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// A piece naming a missing combo.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    // expected-error @+1 {{'reshard_rt.piece' op names a combo the class does not have}}
    reshard_rt.piece dst 0 src 1 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// A piece box leaving its shard.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    // expected-error @+1 {{'reshard_rt.piece' op box of size [4] at [1] leaves its source shard of shape [4]}}
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [1] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// Descriptors that do not describe the box.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    // expected-error @+1 {{'reshard_rt.piece' op has descriptors that do not describe its box; expected pack #reshard_rt.box<+0 run 16> unpack #reshard_rt.box<+0 run 16> copy #reshard_rt.copy<+0 -> +0 run 16>}}
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+4 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
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

// -----

// Pieces that do not tile the shard.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  // expected-error @+1 {{'reshard_rt.class' op the pieces of destination combo 0 cover 2 elements of its 4; they must tile the shard}}
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [2] at [0] from [0] pack <+0 run 8> unpack <+0 run 8> copy <+0 -> +0 run 8>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 8 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 8 items 0
  }
}

// -----

// Pieces that overlap.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    // expected-note @+1 {{the other piece}}
    reshard_rt.piece dst 0 src 0 size [2] at [0] from [0] pack <+0 run 8> unpack <+0 run 8> copy <+0 -> +0 run 8>
    // expected-error @+1 {{'reshard_rt.piece' op overlaps another piece of destination combo 0; each element arrives once}}
    reshard_rt.piece dst 0 src 0 size [2] at [1] from [1] pack <+4 run 8> unpack <+4 run 8> copy <+4 -> +4 run 8>
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

// -----

// A piece of an empty box.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    // expected-error @+1 {{'reshard_rt.piece' op has an empty box}}
    reshard_rt.piece dst 0 src 0 size [0] at [0] from [0] pack <+0 run 0> unpack <+0 run 0> copy <+0 -> +0 run 0>
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

// -----

// An item of count 0.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  // expected-error @+1 {{'reshard_rt.items' op item 0 needs a positive stride and count}}
  reshard_rt.items 0 [g0.p0[0 x 0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// An item past member 2^31.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  // expected-error @+1 {{'reshard_rt.items' op item 0 reaches past member 2^31}}
  reshard_rt.items 0 [g0.p0[0 by 1073741824 x 2]]
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 1 quota 32 bytes 32 items 1
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 1 start 1 quota 32 bytes 32 items 1
  }
}

// -----

// A stream of phase 2.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    // expected-error @+1 {{'reshard_rt.send' op phase -1 must be 0 (from source shards), a relay lane 1 + r, or a transit's 2^31 + r (into it) or 2^32 + r (out of it), r a rank}}
    reshard_rt.send to 1 phase -1 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A stream of quota 0.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    // expected-error @+1 {{'reshard_rt.recv' op needs positive bytes and quota and a start of at least 0}}
    reshard_rt.recv from 0 phase 0 start 0 quota 0 bytes 16 items 0
  }
}

// -----

// A stream past step 2^22 (the most a rank's program takes): one step more
// than that.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    // expected-error @+1 {{'reshard_rt.send' op runs past step 4194304, the most a rank's program takes}}
    reshard_rt.send to 1 phase 0 start 0 quota 1 bytes 4194305 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A copy after a send.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
    // expected-error @+1 {{'reshard_rt.copy' op must come first, once per rank}}
    reshard_rt.copy items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A send after a receive.
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0 x 2]]
  reshard_rt.items 1 [g0.p0[0 x 2]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 32 bytes 32 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.recv from 0 phase 0 start 0 quota 32 bytes 32 items 0
    // expected-error @+1 {{'reshard_rt.send' op follows a receive; sends come first}}
    reshard_rt.send to 2 phase 1 start 1 quota 32 bytes 32 items 1
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 1 phase 1 start 1 quota 32 bytes 32 items 1
  }
}

// -----

// A stream to the rank itself.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    // expected-error @+1 {{'reshard_rt.send' op names its own rank; a rank copies locally with reshard_rt.copy}}
    reshard_rt.send to 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// Two streams to one peer in one phase.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
    // expected-error @+1 {{'reshard_rt.send' op comes out of order; a rank's sends are ordered by (peer, phase), one stream each}}
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  reshard_rt.rank 1 workspace = 16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// A negative workspace.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 16 items 0
  }
  // expected-error @+1 {{'reshard_rt.rank' op has a negative workspace}}
  reshard_rt.rank 1 workspace = -16 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 16 items 0
  }
}

// -----

// Items are rows of 5 (the generic form can hold anything).
reshard_rt.plan @p num_ranks = 1 tensors = [] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.items' op holds 4 integers, not rows of 5}}
  "reshard_rt.items"() <{index = 0 : i64, rows = array<i64: 0, 0, 0, 1>}> : () -> ()
}

// -----

// An item must be spelled gG.pP[...].
reshard_rt.plan @p num_ranks = 1 tensors = [] fingerprint = 0 {
  // expected-error @+1 {{expected an item gG.pP[...], got 'group0'}}
  reshard_rt.items 0 [group0[0]]
}

// -----

// A box offset is written +N.
reshard_rt.plan @p num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0] shapes [[4]] {
    // expected-error @+1 {{expected '+'}}
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
}

// -----

// A shard shape has the class's rank.
reshard_rt.plan @p num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  // expected-error @+1 {{a shard shape of a rank-1 class has 1 dims}}
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4, 4]] dst combos [0] shapes [[4]] {
  }
}

// -----

// A dim order that is not a permutation of the class's dims.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  // expected-error @+1 {{'reshard_rt.class' op has destination dim_order [0, 2], not a permutation of its 2 dim(s)}}
  reshard_rt.class 0 element_bytes 4 rank 2 src combos [0] shapes [[2, 2]] dst combos [0] shapes [[2, 2]] dim_order [0, 2] {
    reshard_rt.piece dst 0 src 0 size [2, 2] at [0, 0] from [0, 0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
}

// -----

// Descriptors must follow the dim order: a [2, 2] shard stored [1, 0] is
// not one run of 16 bytes in logical order.
reshard_rt.plan @p num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.class 0 element_bytes 4 rank 2 src combos [0] shapes [[2, 2]] dst combos [0] shapes [[2, 2]] dim_order [1, 0] {
    // expected-error @+1 {{'reshard_rt.piece' op has descriptors that do not describe its box; expected pack #reshard_rt.box<+0 run 16> unpack #reshard_rt.box<+0 run 4 x [2 by 4, 2 by 8]> copy #reshard_rt.copy<+0 -> +0 run 4 x [2 by 8 -> 4, 2 by 4 -> 8]>}}
    reshard_rt.piece dst 0 src 0 size [2, 2] at [0, 0] from [0, 0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
}

// -----

// Shards that add up past 2^60 bytes (int8 [2^62] tensors, each below
// 2^63 bytes, from rank 0 to ranks 1 and 2): the plan's step loads and
// workspaces would wrap (this one states workspace 0 for rank 0, which
// the step check would take), so it is refused, as planning refuses such
// a layout, at the group that crosses the limit.
reshard_rt.plan @p num_ranks = 3 tensors = ["t", "u"] dtypes = ["int8", "int8"] fingerprint = 0 staging_budget = 9223372036854775807 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1]
  reshard_rt.mesh 2 ranks [2]
  reshard_rt.class 0 element_bytes 1 rank 1 src combos [0] shapes [[4611686018427387904]] dst combos [0] shapes [[4611686018427387904]] {
    reshard_rt.piece dst 0 src 0 size [4611686018427387904] at [0] from [0] pack <+0 run 4611686018427387904> unpack <+0 run 4611686018427387904> copy <+0 -> +0 run 4611686018427387904>
  }
  // expected-error @+1 {{'reshard_rt.group' op brings the plan's shards (every tensor's, on both sides) to 2^60 bytes or more; every byte count of a plan must fit 64 bits}}
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.group 1 class 0 from 0 to 2 tensors [1]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.items 1 [g1.p0[0]]
  reshard_rt.rank 0 workspace = 0 {
    reshard_rt.send to 1 phase 0 start 0 quota 4611686018427387904 bytes 4611686018427387904 items 0
    reshard_rt.send to 2 phase 0 start 0 quota 4611686018427387904 bytes 4611686018427387904 items 1
  }
  reshard_rt.rank 1 workspace = 4611686018427387904 {
    reshard_rt.recv from 0 phase 0 start 0 quota 4611686018427387904 bytes 4611686018427387904 items 0
  }
  reshard_rt.rank 2 workspace = 4611686018427387904 {
    reshard_rt.recv from 0 phase 0 start 0 quota 4611686018427387904 bytes 4611686018427387904 items 1
  }
}
