// RUN: reshard-opt %s -split-input-file -verify-diagnostics

// The reshard_rt plan verifier (PlanOp::verifyRegions), one case per
// branch, in the order the verifier checks them. Each case is otherwise a
// valid plan, so the error shown is the only one. The verifier guards what
// the generated code relies on: descriptors inside the shards, staging
// inside the workspace, one matched message per rank pair and step, and no
// destination byte written twice.
//   box  [tensor, buffer, offset, run, n, (count, stride) x n]
//   copy [tensor, src_offset, dst_offset, run, n, (count, src, dst) x n]

// expected-error @+1 {{'reshard_rt.plan' op num_ranks must be in [1, 2^31 - 1], got 0}}
reshard_rt.plan @num_ranks_zero num_ranks = 0 tensors = [] fingerprint = 0 {
}

// -----

// expected-error @+1 {{'reshard_rt.plan' op num_ranks must be in [1, 2^31 - 1], got -2}}
reshard_rt.plan @num_ranks_negative num_ranks = -2 tensors = [] fingerprint = 0 {
}

// -----

// 2^31: ranks are C ints in the generated code.
// expected-error @+1 {{'reshard_rt.plan' op num_ranks must be in [1, 2^31 - 1], got 2147483648}}
reshard_rt.plan @num_ranks_above_int32 num_ranks = 2147483648 tensors = [] fingerprint = 0 {
}

// -----

reshard_rt.plan @op_in_plan num_ranks = 1 tensors = [] fingerprint = 0 {
  // expected-error @+1 {{'builtin.module' op is not allowed in a reshard_rt.plan}}
  builtin.module {}
}

// -----

reshard_rt.plan @rank_outside num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.rank' op rank 2 is outside the communicator of 2 ranks}}
  reshard_rt.rank 2 workspace = 0 shards = [0, 0, 0] {
  }
}

// -----

reshard_rt.plan @rank_negative num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.rank' op rank -1 is outside the communicator of 2 ranks}}
  reshard_rt.rank -1 workspace = 0 shards = [0, 0, 0] {
  }
}

// -----

reshard_rt.plan @two_programs num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 0 shards = [0, 0, 0] {
  }
  // expected-error @+1 {{'reshard_rt.rank' op rank 1 has two programs}}
  reshard_rt.rank 1 workspace = 0 shards = [0, 0, 0] {
  }
}

// -----

reshard_rt.plan @shards_not_triples num_ranks = 1 tensors = ["w", "b"] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.rank' op shards are (tensor, source bytes, destination bytes) triples; got 4 numbers}}
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16, 1] {
  }
}

// -----

reshard_rt.plan @shards_tensor_out_of_range num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.rank' op shards[1] names tensor 1 of 1}}
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16, 1, 8, 8] {
  }
}

// -----

reshard_rt.plan @shards_tensor_negative num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.rank' op shards[0] names tensor -1 of 1}}
  reshard_rt.rank 0 workspace = 0 shards = [-1, 16, 16] {
  }
}

// -----

reshard_rt.plan @shards_unsorted num_ranks = 1 tensors = ["w", "b"] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.rank' op shards[1] names tensor 0 after tensor 1; tensors must ascend, once each}}
  reshard_rt.rank 0 workspace = 0 shards = [1, 8, 8, 0, 16, 16] {
  }
}

// -----

reshard_rt.plan @shards_twice num_ranks = 1 tensors = ["w", "b"] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.rank' op shards[1] names tensor 0 after tensor 0; tensors must ascend, once each}}
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16, 0, 16, 16] {
  }
}

// -----

reshard_rt.plan @shards_neither num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.rank' op shards[0] lists tensor 0 with neither shard; leave it out}}
  reshard_rt.rank 0 workspace = 0 shards = [0, -1, -1] {
  }
}

// -----

reshard_rt.plan @workspace_negative num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.rank' op workspace must not be negative}}
  reshard_rt.rank 0 workspace = -16 shards = [0, 16, 16] {
  }
}

// -----

// -1 marks a rank outside the mesh; -2 is nothing.
reshard_rt.plan @shard_bytes_below_minus_one num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  // expected-error @+1 {{'reshard_rt.rank' op shard sizes are bytes, or -1 for a rank outside the mesh; got -2 for tensor 0}}
  reshard_rt.rank 0 workspace = 0 shards = [0, -2, 16] {
  }
}

// -----

// Copies run before the first step; one after a step would be reordered.
reshard_rt.plan @copy_after_step num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    reshard_rt.step 0 {
    }
    // expected-error @+1 {{'reshard_rt.copy' op must come before the rank's first step (copies run first)}}
    reshard_rt.copy [0, 0, 0, 16, 0]
  }
}

// -----

// Fewer than the 5 fixed integers.
reshard_rt.plan @copy_truncated_header num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op has a truncated copy descriptor}}
    reshard_rt.copy [0, 0, 0, 16]
  }
}

// -----

// n = 1 needs 3 more integers (count, src stride, dst stride); the second
// descriptor has 2.
reshard_rt.plan @copy_truncated_loops num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op has a truncated copy descriptor}}
    reshard_rt.copy [0, 0, 0, 8, 0, 0, 8, 4, 1, 2, 4]
  }
}

// -----

reshard_rt.plan @copy_tensor_out_of_range num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op names tensor 1}}
    reshard_rt.copy [1, 0, 0, 16, 0]
  }
}

// -----

reshard_rt.plan @copy_tensor_negative num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op names tensor -1}}
    reshard_rt.copy [-1, 0, 0, 16, 0]
  }
}

// -----

reshard_rt.plan @copy_negative_offset num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op a copy source has offset -4 and run 4; both must be positive (offset may be 0)}}
    reshard_rt.copy [0, -4, 0, 4, 0]
  }
}

// -----

reshard_rt.plan @copy_zero_run num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op a copy source has offset 0 and run 0; both must be positive (offset may be 0)}}
    reshard_rt.copy [0, 0, 0, 0, 0]
  }
}

// -----

// The destination side is checked with its own offset and stride.
reshard_rt.plan @copy_dst_negative_offset num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op a copy destination has offset -8 and run 4; both must be positive (offset may be 0)}}
    reshard_rt.copy [0, 0, -8, 4, 0]
  }
}

// -----

// offset + run = (2^63 - 1) + 9 does not fit in 64 bits (it would wrap to
// a small end inside the buffer).
reshard_rt.plan @copy_offset_run_overflow num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op a copy source overflows 64 bits}}
    reshard_rt.copy [0, 9223372036854775807, 0, 9, 0]
  }
}

// -----

reshard_rt.plan @copy_loop_count_zero num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op a copy source has a loop of count 0 and stride 4}}
    reshard_rt.copy [0, 0, 0, 4, 1, 0, 4, 4]
  }
}

// -----

reshard_rt.plan @copy_dst_stride_negative num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op a copy destination has a loop of count 2 and stride -4}}
    reshard_rt.copy [0, 0, 8, 4, 1, 2, 4, -4]
  }
}

// -----

// (2^62 - 1) x 4 does not fit in 64 bits.
reshard_rt.plan @copy_overflow num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op a copy source overflows 64 bits}}
    reshard_rt.copy [0, 0, 0, 4, 1, 4611686018427387904, 4, 4]
  }
}

// -----

// 4 rows of 8 B, 8 B apart in the source (ends at 32, fits) and 16 B apart
// in the destination (ends at 48 + 8 = 56 > 32).
reshard_rt.plan @copy_beyond_dst num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 32, 32] {
    // expected-error @+1 {{'reshard_rt.copy' op a copy destination reaches byte 56 of a buffer of 32 bytes}}
    reshard_rt.copy [0, 0, 0, 8, 1, 4, 8, 16]
  }
}

// -----

// A rank outside the source mesh (-1) has nothing to copy from.
reshard_rt.plan @copy_from_no_shard num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, -1, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op a copy source is in a shard the rank does not have (not in that side's mesh)}}
    reshard_rt.copy [0, 0, 0, 4, 0]
  }
}

// -----

// 2^26 + 1 runs of 1 byte: too many to list for the overlap check.
reshard_rt.plan @copy_too_many_runs num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 1, 67108865] {
    // expected-error @+1 {{'reshard_rt.copy' op brings the plan's writes to more than 67108864 contiguous runs; the verifier cannot check that many for overlaps}}
    reshard_rt.copy [0, 0, 0, 1, 1, 67108865, 0, 1]
  }
}

// -----

// Destination bytes [8, 16) twice: [0, 16) then [8, 16).
reshard_rt.plan @copy_overlap num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op the local copies of tensor 0 writes bytes [8, 16) twice}}
    reshard_rt.copy [0, 0, 0, 16, 0, 0, 0, 8, 8, 0]
  }
}

// -----

// Three descriptors of interleaved runs (three ascending sequences, merged
// by the check): [0, 2) [6, 8), then [2, 4) [8, 10), then [4, 6) [9, 11).
reshard_rt.plan @copy_interleaved_overlap num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op the local copies of tensor 0 writes bytes [9, 10) twice}}
    reshard_rt.copy [0, 0, 0, 2, 1, 2, 6, 6, 0, 2, 2, 2, 1, 2, 6, 6, 0, 4, 4, 2, 1, 2, 5, 5]
  }
}

// -----

// One descriptor whose destination stride (4) is shorter than its run (8).
reshard_rt.plan @copy_self_overlap num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.copy' op the local copies of tensor 0 writes bytes [4, 8) twice}}
    reshard_rt.copy [0, 0, 0, 8, 1, 2, 8, 4]
  }
}

// -----

// Two copy ops of one rank: [0, 8) then [4, 12) of the destination.
reshard_rt.plan @copy_ops_overlap num_ranks = 1 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [0, 16, 16] {
    reshard_rt.copy [0, 0, 0, 8, 0]
    // expected-error @+1 {{'reshard_rt.copy' op the local copies of tensor 0 writes bytes [4, 8) twice}}
    reshard_rt.copy [0, 0, 4, 8, 0]
  }
}

// -----

reshard_rt.plan @op_in_rank num_ranks = 1 tensors = [] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [] {
    // expected-error @+1 {{'builtin.module' op is not allowed in a reshard_rt.rank}}
    builtin.module {}
  }
}

// -----

// A negative first step: lastStep starts at -1, so "does not follow" would
// not catch it.
reshard_rt.plan @step_negative num_ranks = 1 tensors = [] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [] {
    // expected-error @+1 {{'reshard_rt.step' op step index -1 must not be negative}}
    reshard_rt.step -1 {
    }
  }
}

// -----

reshard_rt.plan @step_repeated num_ranks = 1 tensors = [] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [] {
    reshard_rt.step 1 {
    }
    // expected-error @+1 {{'reshard_rt.step' op step 1 does not follow step 1}}
    reshard_rt.step 1 {
    }
  }
}

// -----

reshard_rt.plan @step_decreasing num_ranks = 1 tensors = [] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [] {
    reshard_rt.step 3 {
    }
    // expected-error @+1 {{'reshard_rt.step' op step 2 does not follow step 3}}
    reshard_rt.step 2 {
    }
  }
}

// -----

reshard_rt.plan @op_in_step num_ranks = 1 tensors = [] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 0 shards = [] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'builtin.module' op is not allowed in a reshard_rt.step}}
      builtin.module {}
    }
  }
}

// -----

reshard_rt.plan @peer_self num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, 16] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op peer 0 must be another rank of the communicator of 2}}
      reshard_rt.send to 0 bytes 16 staging 0 pack = [0, 0, 0, 16, 0]
    }
  }
}

// -----

reshard_rt.plan @peer_outside num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.recv' op peer 2 must be another rank of the communicator of 2}}
      reshard_rt.recv from 2 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]
    }
  }
}

// -----

reshard_rt.plan @peer_negative num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op peer -1 must be another rank of the communicator of 2}}
      reshard_rt.send to -1 bytes 16 staging 0 pack = [0, 0, 0, 16, 0]
    }
  }
}

// -----

// 16 B at 8 ends at 24, past a workspace of 16.
reshard_rt.plan @staging_outside num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op staging of 16 bytes at offset 8 must be non-empty and inside the workspace of 16 bytes}}
      reshard_rt.send to 1 bytes 16 staging 8 pack = [0, 0, 0, 16, 0]
    }
  }
}

// -----

reshard_rt.plan @staging_negative num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.recv' op staging of 16 bytes at offset -16 must be non-empty and inside the workspace of 16 bytes}}
      reshard_rt.recv from 0 bytes 16 staging -16 unpack = [0, 1, 0, 16, 0]
    }
  }
}

// -----

reshard_rt.plan @staging_empty num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op staging of 0 bytes at offset 0 must be non-empty and inside the workspace of 16 bytes}}
      reshard_rt.send to 1 bytes 0 staging 0 pack = []
    }
  }
}

// -----

// staging + bytes = (2^63 - 1) + 1 does not fit in 64 bits (it would wrap
// below the workspace size).
reshard_rt.plan @staging_overflow num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op staging of 1 bytes at offset 9223372036854775807 must be non-empty and inside the workspace of 16 bytes}}
      reshard_rt.send to 1 bytes 1 staging 9223372036854775807 pack = [0, 0, 0, 1, 0]
    }
  }
}

// -----

// n = 65 loops: more than the runtime's odometer holds.
reshard_rt.plan @box_too_many_loops num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op has a box descriptor with 65 loops; 0 to 64 are allowed}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 16, 65]
    }
  }
}

// -----

reshard_rt.plan @box_negative_loops num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.recv' op has a box descriptor with -1 loops; 0 to 64 are allowed}}
      reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 16, -1]
    }
  }
}

// -----

reshard_rt.plan @box_truncated_header num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op has a truncated box descriptor}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 16]
    }
  }
}

// -----

// n = 2 needs 4 more integers; there are 3.
reshard_rt.plan @box_truncated_loops num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.recv' op has a truncated box descriptor}}
      reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 4, 2, 2, 8, 2]
    }
  }
}

// -----

reshard_rt.plan @box_tensor_out_of_range num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op box descriptor names tensor 1 buffer 0; receives unpack into destination shards (buffer 1)}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [1, 0, 0, 16, 0]
    }
  }
}

// -----

reshard_rt.plan @box_bad_buffer num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, 16] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op box descriptor names tensor 0 buffer 2; receives unpack into destination shards (buffer 1)}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 2, 0, 16, 0]
    }
  }
}

// -----

reshard_rt.plan @unpack_into_source num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 16 shards = [0, 16, 16] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.recv' op box descriptor names tensor 0 buffer 0; receives unpack into destination shards (buffer 1)}}
      reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 0, 0, 16, 0]
    }
  }
}

// -----

reshard_rt.plan @box_negative_offset num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op a packed box has offset -1 and run 16; both must be positive (offset may be 0)}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, -1, 16, 0]
    }
  }
}

// -----

reshard_rt.plan @box_negative_run num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.recv' op an unpacked box has offset 0 and run -16; both must be positive (offset may be 0)}}
      reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, -16, 0]
    }
  }
}

// -----

// offset + run = (2^63 - 1) + 8 does not fit in 64 bits.
reshard_rt.plan @box_offset_run_overflow num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op a packed box overflows 64 bits}}
      reshard_rt.send to 1 bytes 8 staging 0 pack = [0, 0, 9223372036854775807, 8, 0]
    }
  }
}

// -----

reshard_rt.plan @box_loop_count_negative num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op a packed box has a loop of count -2 and stride 8}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 8, 1, -2, 8]
    }
  }
}

// -----

// The second loop is the bad one.
reshard_rt.plan @box_loop_stride_negative num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.recv' op an unpacked box has a loop of count 2 and stride -8}}
      reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 4, 2, 2, 8, 2, -8]
    }
  }
}

// -----

// (2^62 + 1 - 1) x 2 = 2^63 does not fit in 64 bits.
reshard_rt.plan @box_overflow num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op a packed box overflows 64 bits}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 8, 1, 4611686018427387905, 2]
    }
  }
}

// -----

// The extent fits (stride 0), but count x run = 2^62 x 2 does not.
reshard_rt.plan @box_bytes_overflow num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op a packed box overflows 64 bits}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 2, 1, 4611686018427387904, 0]
    }
  }
}

// -----

// Each box fits (2^59 runs of 8 B = 2^62 B, stride 0), but the message's
// running total does not: four of them and 8 B more would wrap to exactly
// the 8 bytes of the message.
reshard_rt.plan @described_bytes_overflow num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op a packed box overflows 64 bits}}
      reshard_rt.send to 1 bytes 8 staging 0 pack = [0, 0, 0, 8, 1, 576460752303423488, 0, 0, 0, 0, 8, 1, 576460752303423488, 0, 0, 0, 0, 8, 1, 576460752303423488, 0, 0, 0, 0, 8, 1, 576460752303423488, 0, 0, 0, 0, 8, 0]
    }
  }
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 0 {
      reshard_rt.recv from 0 bytes 8 staging 0 unpack = [0, 1, 0, 8, 0]
    }
  }
}

// -----

// 2 runs of 8 B, 12 apart, from byte 4: ends at 4 + 12 + 8 = 24 > 16.
reshard_rt.plan @box_beyond_src num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op a packed box reaches byte 24 of a buffer of 16 bytes}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 4, 8, 1, 2, 12]
    }
  }
}

// -----

// A relay packs from its destination shard, which must hold the box.
reshard_rt.plan @box_beyond_dst num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, 8] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op a packed box reaches byte 16 of a buffer of 8 bytes}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 1, 0, 16, 0]
    }
  }
}

// -----

// Rank 1 is outside the destination mesh (-1): nothing to unpack into.
reshard_rt.plan @unpack_into_no_shard num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.recv' op an unpacked box is in a shard the rank does not have (not in that side's mesh)}}
      reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]
    }
  }
}

// -----

// 2^26 + 1 runs of 1 byte in one receive: too many to list for the overlap
// check (unchecked, 2^40 runs would take hours).
reshard_rt.plan @receive_too_many_runs num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 67108865 shards = [0, -1, 67108865] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.recv' op brings the plan's writes to more than 67108864 contiguous runs; the verifier cannot check that many for overlaps}}
      reshard_rt.recv from 0 bytes 67108865 staging 0 unpack = [0, 1, 0, 1, 1, 67108865, 1]
    }
  }
}

// -----

// Two boxes of 8 and 4 B describe 12 B of a 16 B message.
reshard_rt.plan @described_bytes num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op describes 12 bytes but the message has 16}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 8, 0, 0, 0, 8, 4, 0]
    }
  }
}

// -----

reshard_rt.plan @second_send num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      reshard_rt.send to 1 bytes 8 staging 0 pack = [0, 0, 0, 8, 0]
      // expected-error @+1 {{'reshard_rt.send' op is a second message between ranks 0 and 1 in step 0}}
      reshard_rt.send to 1 bytes 8 staging 8 pack = [0, 0, 8, 8, 0]
    }
  }
}

// -----

reshard_rt.plan @second_recv num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 4 {
      reshard_rt.recv from 0 bytes 8 staging 0 unpack = [0, 1, 0, 8, 0]
      // expected-error @+1 {{'reshard_rt.recv' op is a second message between ranks 0 and 1 in step 4}}
      reshard_rt.recv from 0 bytes 8 staging 8 unpack = [0, 1, 8, 8, 0]
    }
  }
}

// -----

// A send [0, 16) and a receive [8, 24) share staging bytes [8, 16).
reshard_rt.plan @staging_overlap num_ranks = 3 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 32 shards = [0, 16, 16] {
    // expected-error @+1 {{'reshard_rt.step' op the staging of this step writes bytes [8, 16) twice}}
    reshard_rt.step 0 {
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 16, 0]
      reshard_rt.recv from 2 bytes 16 staging 8 unpack = [0, 1, 0, 16, 0]
    }
  }
}

// -----

// Receives from ranks 1 and 2 both write bytes [4, 8) of the shard.
reshard_rt.plan @receives_overlap num_ranks = 3 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 32 shards = [0, -1, 16] {
    // expected-error @+1 {{'reshard_rt.step' op the receives of tensor 0 writes bytes [4, 8) twice}}
    reshard_rt.step 0 {
      reshard_rt.recv from 1 bytes 8 staging 0 unpack = [0, 1, 0, 8, 0]
      reshard_rt.recv from 2 bytes 8 staging 16 unpack = [0, 1, 4, 8, 0]
    }
  }
}

// -----

// One unpacked box writing the same 4 bytes twice (loop stride 0).
reshard_rt.plan @receive_stride_zero num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    // expected-error @+1 {{'reshard_rt.step' op the receives of tensor 0 writes bytes [0, 4) twice}}
    reshard_rt.step 0 {
      reshard_rt.recv from 0 bytes 8 staging 0 unpack = [0, 1, 0, 4, 1, 2, 0]
    }
  }
}

// -----

reshard_rt.plan @send_without_recv num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op has no matching reshard_rt.recv on rank 1 in step 0}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 16, 0]
    }
  }
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
  }
}

// -----

// The receive is there, but in another step.
reshard_rt.plan @send_recv_other_step num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op has no matching reshard_rt.recv on rank 1 in step 0}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 16, 0]
    }
  }
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 1 {
      reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]
    }
  }
}

// -----

// Rank 0 has no program at all.
reshard_rt.plan @recv_without_send num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 2 {
      // expected-error @+1 {{'reshard_rt.recv' op has no matching reshard_rt.send on rank 0 in step 2}}
      reshard_rt.recv from 0 bytes 16 staging 0 unpack = [0, 1, 0, 16, 0]
    }
  }
}

// -----

reshard_rt.plan @size_mismatch num_ranks = 2 tensors = ["w"] fingerprint = 0 {
  reshard_rt.rank 0 workspace = 16 shards = [0, 16, -1] {
    reshard_rt.step 0 {
      // expected-error @+1 {{'reshard_rt.send' op sends 16 bytes but rank 1 receives 8}}
      reshard_rt.send to 1 bytes 16 staging 0 pack = [0, 0, 0, 16, 0]
    }
  }
  reshard_rt.rank 1 workspace = 16 shards = [0, -1, 16] {
    reshard_rt.step 0 {
      reshard_rt.recv from 0 bytes 8 staging 0 unpack = [0, 1, 0, 8, 0]
    }
  }
}

// -----

// Tensor names become shard file names and C ABI answers: one each.
// expected-error @+1 {{'reshard_rt.plan' op names tensor "w" twice (tensors[0] and tensors[1])}}
reshard_rt.plan @duplicate_tensor_names num_ranks = 1 tensors = ["w", "w"] fingerprint = 0 {
}
