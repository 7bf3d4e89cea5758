// RUN: reshard-opt %s | reshard-opt | FileCheck %s
// RUN: reshard-opt %s --mlir-print-op-generic | reshard-opt | FileCheck %s

// Round trip of every reshard_rt op (plan, rank, copy, step, send, recv) in
// custom and generic syntax: a plan of two tensors over four ranks that the
// plan verifier accepts (every send matched by a receive of the same size,
// staging inside the workspace, boxes inside their shards), a rank that is
// in no mesh (-1 bytes) and one with nothing to do, extra attributes, a
// plan without tensors, and the largest num_ranks. Descriptors are the
// formats of the dialect description:
//   box  [tensor, buffer, offset, run, n, (count, stride) x n]
//   copy [tensor, src_offset, dst_offset, run, n, (count, src, dst) x n]
//
// @w is 4 x 4 f32 (64 B, rows 16 B apart), @b is 4 x f32 (16 B).
// Rank 0 sends columns 0-1 of @w (4 runs of 8 B, 16 B apart) to rank 1 in
// step 0 and columns 2-3 to rank 2 in step 2; it copies @b[2:4] to its own
// @b[0:2] and receives @b[2:4] from rank 2. Rank 1 receives its columns
// 0-1 and copies columns 2-3 from its own source shard (both strides 16).

// CHECK-LABEL: reshard_rt.plan @roundtrip num_ranks = 4 tensors = ["w", "b"] fingerprint = -7 attributes {note = "hand-written"} {
// CHECK-NEXT:    reshard_rt.rank 0 workspace = 48 shards = [0, 64, -1, 1, 16, 16] {
// CHECK-NEXT:      reshard_rt.copy [1, 8, 0, 8, 0]{{$}}
// CHECK-NEXT:      reshard_rt.step 0 {
// CHECK-NEXT:        reshard_rt.send to 1 bytes 32 staging 0 pack = [0, 0, 0, 8, 1, 4, 16]{{$}}
// CHECK-NEXT:        reshard_rt.recv from 2 bytes 8 staging 32 unpack = [1, 1, 8, 8, 0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      reshard_rt.step 2 {
// CHECK-NEXT:        reshard_rt.send to 2 bytes 32 staging 0 pack = [0, 0, 8, 8, 1, 4, 16] {tag = 1 : i64}{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    reshard_rt.rank 1 workspace = 32 shards = [0, 64, 64] attributes {note = "copies and receives"} {
// CHECK-NEXT:      reshard_rt.copy [0, 8, 8, 8, 1, 4, 16, 16]{{$}}
// CHECK-NEXT:      reshard_rt.step 0 {
// CHECK-NEXT:        reshard_rt.recv from 0 bytes 32 staging 0 unpack = [0, 1, 0, 8, 1, 4, 16]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    reshard_rt.rank 2 workspace = 32 shards = [0, -1, 32, 1, 16, -1] {
// CHECK-NEXT:      reshard_rt.step 0 {
// CHECK-NEXT:        reshard_rt.send to 0 bytes 8 staging 0 pack = [1, 0, 8, 8, 0]{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:      reshard_rt.step 2 {
// CHECK-NEXT:        reshard_rt.recv from 0 bytes 32 staging 0 unpack = [0, 1, 0, 32, 0] {tag = 1 : i64}{{$}}
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    reshard_rt.rank 3 workspace = 0 shards = [0, 0, 0, 1, 0, 0] {
// CHECK-NEXT:    }
// CHECK-NEXT:  }
reshard_rt.plan @roundtrip num_ranks = 4 tensors = ["w", "b"] fingerprint = -7
    attributes {note = "hand-written"} {
  reshard_rt.rank 0 workspace = 48 shards = [0, 64, -1, 1, 16, 16] {
    reshard_rt.copy [1, 8, 0, 8, 0]
    reshard_rt.step 0 {
      reshard_rt.send to 1 bytes 32 staging 0 pack = [0, 0, 0, 8, 1, 4, 16]
      reshard_rt.recv from 2 bytes 8 staging 32 unpack = [1, 1, 8, 8, 0]
    }
    reshard_rt.step 2 {
      reshard_rt.send to 2 bytes 32 staging 0 pack = [0, 0, 8, 8, 1, 4, 16] {tag = 1}
    }
  }
  reshard_rt.rank 1 workspace = 32 shards = [0, 64, 64]
      attributes {note = "copies and receives"} {
    reshard_rt.copy [0, 8, 8, 8, 1, 4, 16, 16]
    reshard_rt.step 0 {
      reshard_rt.recv from 0 bytes 32 staging 0 unpack = [0, 1, 0, 8, 1, 4, 16]
    }
  }
  reshard_rt.rank 2 workspace = 32 shards = [0, -1, 32, 1, 16, -1] {
    reshard_rt.step 0 {
      reshard_rt.send to 0 bytes 8 staging 0 pack = [1, 0, 8, 8, 0]
    }
    reshard_rt.step 2 {
      reshard_rt.recv from 0 bytes 32 staging 0 unpack = [0, 1, 0, 32, 0] {tag = 1}
    }
  }
  reshard_rt.rank 3 workspace = 0 shards = [0, 0, 0, 1, 0, 0] {
  }
}

// A plan may hold no tensors and no rank programs.
// CHECK-LABEL: reshard_rt.plan @empty num_ranks = 1 tensors = [] fingerprint = 0 {
// CHECK-NEXT:  }
reshard_rt.plan @empty num_ranks = 1 tensors = [] fingerprint = 0 {
}

// The largest communicator a C int rank can address (one more is in
// invalid.mlir).
// CHECK-LABEL: reshard_rt.plan @max_ranks num_ranks = 2147483647 tensors = [] fingerprint = 0 {
// CHECK-NEXT:  }
reshard_rt.plan @max_ranks num_ranks = 2147483647 tensors = [] fingerprint = 0 {
}
