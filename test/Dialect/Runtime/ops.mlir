// RUN: reshard-opt %s | reshard-opt | FileCheck %s
// RUN: reshard-opt %s --mlir-print-op-generic | reshard-opt | FileCheck %s

// Round trip of every reshard_rt op in custom and generic syntax, on the
// plan reshard-compile makes for three tensors (written out here, and
// accepted by the verifier): @w0 and @w1 (4 x 4 f32, rows over ranks
// [0, 1] to columns over ranks [1, 2]: one class, one group of two
// members) and @bias (4 x f32, split over [0, 1], replicated on [1, 2]),
// staging budget 32.
//
// Class 0: combo c of the source holds rows [2c, 2c + 2) (shard [2, 4],
// rows 16 B apart); combo c of the destination columns [2c, 2c + 2) (shard
// [4, 2], rows 8 B apart). Destination combo 0 takes columns 0-1 of both
// row blocks: from source combo 0 at [0, 0] (two 8-byte runs 16 B apart)
// into rows 0-1 (16 contiguous bytes), from combo 1 into rows 2-3 (+16).
// Class 1: both destination devices (one combo) take [0, 2) from source
// combo 0 and [2, 4) from combo 1.
// Streams: rank 0 sends rank 1 piece 0 of both @w (2 x 16 B) and its half
// of @bias (8 B): 40 B; quota 16 (each end runs 2 streams at once), so 3
// steps. Rank 1 is in both meshes: it copies what it holds (piece 1 of
// both @w members, and piece 1 of @bias) and sends rank 2 its part of
// rank 2's pieces. Workspace: rank 1 stages one 16-byte send and one
// 16-byte receive a step.

// CHECK:      reshard_rt.plan @roundtrip num_ranks = 3 tensors = ["w0", "w1", "bias"] fingerprint = -2836365676780909040 staging_budget = 32 max_ops_per_step = 1024 attributes {note = "hand-checked"} {
// CHECK-NEXT: reshard_rt.mesh 0 ranks [0, 1]
// CHECK-NEXT: reshard_rt.mesh 1 ranks [1, 2]
// CHECK-NEXT: reshard_rt.class 0 element_bytes 4 rank 2 src combos [0, 1] shapes {{\[\[}}2, 4], [2, 4{{\]\]}} dst combos [0, 1] shapes {{\[\[}}4, 2], [4, 2{{\]\]}} {
// CHECK-NEXT: reshard_rt.piece dst 0 src 0 size [2, 2] at [0, 0] from [0, 0] pack <+0 run 8 x [2 by 16]> unpack <+0 run 16> copy <+0 -> +0 run 8 x [2 by 16 -> 8]>
// CHECK-NEXT: reshard_rt.piece dst 0 src 1 size [2, 2] at [2, 0] from [0, 0] pack <+0 run 8 x [2 by 16]> unpack <+16 run 16> copy <+0 -> +16 run 8 x [2 by 16 -> 8]>
// CHECK-NEXT: reshard_rt.piece dst 1 src 0 size [2, 2] at [0, 0] from [0, 2] pack <+8 run 8 x [2 by 16]> unpack <+0 run 16> copy <+8 -> +0 run 8 x [2 by 16 -> 8]>
// CHECK-NEXT: reshard_rt.piece dst 1 src 1 size [2, 2] at [2, 0] from [0, 2] pack <+8 run 8 x [2 by 16]> unpack <+16 run 16> copy <+8 -> +16 run 8 x [2 by 16 -> 8]>
// CHECK-NEXT: }
// CHECK-NEXT: reshard_rt.class 1 element_bytes 4 rank 1 src combos [0, 1] shapes {{\[\[}}2], [2{{\]\]}} dst combos [0, 0] shapes {{\[\[}}4{{\]\]}} {
// CHECK-NEXT: reshard_rt.piece dst 0 src 0 size [2] at [0] from [0] pack <+0 run 8> unpack <+0 run 8> copy <+0 -> +0 run 8>
// CHECK-NEXT: reshard_rt.piece dst 0 src 1 size [2] at [2] from [0] pack <+0 run 8> unpack <+8 run 8> copy <+0 -> +8 run 8>
// CHECK-NEXT: }
// CHECK-NEXT: reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
// CHECK-NEXT: reshard_rt.group 1 class 1 from 0 to 1 tensors [2]
// CHECK-NEXT: reshard_rt.items 0 [g0.p0[0 x 2], g1.p0[0{{\]\]}}
// CHECK-NEXT: reshard_rt.items 1 [g0.p2[0 x 2], g1.p0[0{{\]\]}}
// CHECK-NEXT: reshard_rt.items 2 [g0.p3[0 x 2], g1.p1[0{{\]\]}}
// CHECK-NEXT: reshard_rt.items 3 [g0.p1[0 x 2], g1.p1[0{{\]\]}}
// CHECK-NEXT: reshard_rt.rank 0 workspace = 32 {
// CHECK-NEXT: reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 40 items 0
// CHECK-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 16 bytes 40 items 1
// CHECK-NEXT: }
// CHECK-NEXT: reshard_rt.rank 1 workspace = 32 {
// CHECK-NEXT: reshard_rt.copy items 3
// CHECK-NEXT: reshard_rt.send to 2 phase 0 start 0 quota 16 bytes 40 items 2
// CHECK-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 40 items 0
// CHECK-NEXT: }
// CHECK-NEXT: reshard_rt.rank 2 workspace = 32 {
// CHECK-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 40 items 1
// CHECK-NEXT: reshard_rt.recv from 1 phase 0 start 0 quota 16 bytes 40 items 2
// CHECK-NEXT: }
// CHECK-NEXT: }
reshard_rt.plan @roundtrip num_ranks = 3 tensors = ["w0", "w1", "bias"] fingerprint = -2836365676780909040 staging_budget = 32 max_ops_per_step = 1024 attributes {note = "hand-checked"} {
  reshard_rt.mesh 0 ranks [0, 1]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 2 src combos [0, 1] shapes [[2, 4], [2, 4]] dst combos [0, 1] shapes [[4, 2], [4, 2]] {
    reshard_rt.piece dst 0 src 0 size [2, 2] at [0, 0] from [0, 0] pack <+0 run 8 x [2 by 16]> unpack <+0 run 16> copy <+0 -> +0 run 8 x [2 by 16 -> 8]>
    reshard_rt.piece dst 0 src 1 size [2, 2] at [2, 0] from [0, 0] pack <+0 run 8 x [2 by 16]> unpack <+16 run 16> copy <+0 -> +16 run 8 x [2 by 16 -> 8]>
    reshard_rt.piece dst 1 src 0 size [2, 2] at [0, 0] from [0, 2] pack <+8 run 8 x [2 by 16]> unpack <+0 run 16> copy <+8 -> +0 run 8 x [2 by 16 -> 8]>
    reshard_rt.piece dst 1 src 1 size [2, 2] at [2, 0] from [0, 2] pack <+8 run 8 x [2 by 16]> unpack <+16 run 16> copy <+8 -> +16 run 8 x [2 by 16 -> 8]>
  }
  reshard_rt.class 1 element_bytes 4 rank 1 src combos [0, 1] shapes [[2], [2]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [2] at [0] from [0] pack <+0 run 8> unpack <+0 run 8> copy <+0 -> +0 run 8>
    reshard_rt.piece dst 0 src 1 size [2] at [2] from [0] pack <+0 run 8> unpack <+8 run 8> copy <+0 -> +8 run 8>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.group 1 class 1 from 0 to 1 tensors [2]
  reshard_rt.items 0 [g0.p0[0 x 2], g1.p0[0]]
  reshard_rt.items 1 [g0.p2[0 x 2], g1.p0[0]]
  reshard_rt.items 2 [g0.p3[0 x 2], g1.p1[0]]
  reshard_rt.items 3 [g0.p1[0 x 2], g1.p1[0]]
  reshard_rt.rank 0 workspace = 32 {
    reshard_rt.send to 1 phase 0 start 0 quota 16 bytes 40 items 0
    reshard_rt.send to 2 phase 0 start 0 quota 16 bytes 40 items 1
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.copy items 3
    reshard_rt.send to 2 phase 0 start 0 quota 16 bytes 40 items 2
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 40 items 0
  }
  reshard_rt.rank 2 workspace = 32 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 40 items 1
    reshard_rt.recv from 1 phase 0 start 0 quota 16 bytes 40 items 2
  }
}

// CHECK:      reshard_rt.plan @empty num_ranks = 16777216 tensors = [] fingerprint = 0 {
// CHECK-NEXT: }
reshard_rt.plan @empty num_ranks = 16777216 tensors = [] fingerprint = 0 {
}

// A plan whose MPI runs post each step's next receives ahead: rank 1
// receives 16 bytes in steps 0 and 1 and stages both in step 0.
// CHECK:      reshard_rt.plan @ahead num_ranks = 2 tensors = ["w"] fingerprint = 0 staging_budget = 32 receives_ahead {
// CHECK:      reshard_rt.rank 1 workspace = 32 {
reshard_rt.plan @ahead num_ranks = 2 tensors = ["w"] fingerprint = 0 staging_budget = 32 receives_ahead {
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
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 32 items 0
  }
}
