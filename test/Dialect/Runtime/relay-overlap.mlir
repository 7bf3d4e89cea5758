// RUN: reshard-opt %s | FileCheck %s

// A relay may forward a member while it still receives others: rank 1 gets
// member 0 of the group in step 0 and member 1 in step 1 (16 bytes a step)
// and forwards each to rank 2 one step later, so in step 1 it receives
// member 1 and sends member 0 at once (32 bytes of staging). The verifier
// holds every relayed item to the arrival of what it forwards, item by
// item (invalid.mlir has the relay that runs ahead of its receive).

// CHECK: reshard_rt.items 1 [g0.p0[0], g0.p0[1{{\]\]}}
// CHECK: reshard_rt.rank 1 workspace = 32 {
// CHECK-NEXT: reshard_rt.send to 2 phase 1 start 1 quota 16 bytes 32 items 1
// CHECK-NEXT: reshard_rt.recv from 0 phase 0 start 0 quota 16 bytes 32 items 0
reshard_rt.plan @p num_ranks = 3 tensors = ["w0", "w1"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[4]] dst combos [0, 0] shapes [[4]] {
    reshard_rt.piece dst 0 src 0 size [4] at [0] from [0] pack <+0 run 16> unpack <+0 run 16> copy <+0 -> +0 run 16>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0, 1]
  reshard_rt.items 0 [g0.p0[0], g0.p0[1]]
  reshard_rt.items 1 [g0.p0[0], g0.p0[1]]
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

// Cut through: one 64-byte box arrives over steps 0-7 (8 bytes a step) and
// is forwarded while it arrives, from step 2 (byte b goes out in step
// 2 + b / 8, after step b / 8). The verifier proves it with a bound
// linear in the member and the byte (docs/Runtime.md), which asks for up
// to two steps more than the exact condition: start 1 would be exact, and
// is refused (invalid.mlir); before cut through, the relay had to wait for
// step 8.

// CHECK-LABEL: reshard_rt.plan @cut
// CHECK: reshard_rt.send to 2 phase 1 start 2 quota 8 bytes 64 items 0
reshard_rt.plan @cut num_ranks = 3 tensors = ["w"] fingerprint = 0 {
  reshard_rt.mesh 0 ranks [0]
  reshard_rt.mesh 1 ranks [1, 2]
  reshard_rt.class 0 element_bytes 4 rank 1 src combos [0] shapes [[16]] dst combos [0, 0] shapes [[16]] {
    reshard_rt.piece dst 0 src 0 size [16] at [0] from [0] pack <+0 run 64> unpack <+0 run 64> copy <+0 -> +0 run 64>
  }
  reshard_rt.group 0 class 0 from 0 to 1 tensors [0]
  reshard_rt.items 0 [g0.p0[0]]
  reshard_rt.rank 0 workspace = 16 {
    reshard_rt.send to 1 phase 0 start 0 quota 8 bytes 64 items 0
  }
  reshard_rt.rank 1 workspace = 32 {
    reshard_rt.send to 2 phase 1 start 2 quota 8 bytes 64 items 0
    reshard_rt.recv from 0 phase 0 start 0 quota 8 bytes 64 items 0
  }
  reshard_rt.rank 2 workspace = 16 {
    reshard_rt.recv from 1 phase 1 start 2 quota 8 bytes 64 items 0
  }
}
