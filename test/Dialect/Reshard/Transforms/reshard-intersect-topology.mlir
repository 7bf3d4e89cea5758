// A plan models one topology: tensors that name none follow the one the
// others name (here @u, named before @w, crosses the network as @w does:
// 64 network bytes, none over NVLink); two different topologies are
// refused at the second tensor that names one.

// RUN: rm -rf %t && split-file %s %t
// RUN: reshard-opt %t/follow.mlir --reshard-plan-pipeline=lower=false --reshard-report=text -o /dev/null | FileCheck %s
// CHECK: reshard report: 2 tensors, 4 pieces (1 classes, 1 groups)
// CHECK-NEXT: topology: 2 GPUs/node, NVLink domains of 2, NIC 50.00 GB/s, NVLink 450.00 GB/s per GPU
// CHECK-NEXT: plan network B nvlink B
// CHECK-NEXT: reshard 64 0 0 32 1
// RUN: reshard-opt %t/two.mlir --reshard-intersect -verify-diagnostics -o /dev/null

//--- follow.mlir
module {
  reshard.topology @t gpus_per_node = 2 nvl_domain_size = 2
      nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
  reshard.mesh @a shape = [2] axes = ["x"] ranks = [0, 1]
  reshard.mesh @b shape = [2] axes = ["x"] ranks = [2, 3]
  reshard.redistribute @u from @a <[[x]]> to @b <[[x]]>
      : tensor<8xf32> -> tensor<8xf32>
  reshard.redistribute @w from @a <[[x]]> to @b <[[x]]> topology @t
      : tensor<8xf32> -> tensor<8xf32>
}

//--- two.mlir
module {
  reshard.topology @t gpus_per_node = 2 nvl_domain_size = 2
      nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
  reshard.topology @s gpus_per_node = 4 nvl_domain_size = 4
      nvlink_GBps_per_gpu = 450.0 nic_GBps_per_gpu = 50.0
  reshard.mesh @a shape = [2] axes = ["x"] ranks = [0, 1]
  reshard.redistribute @u from @a <[[x]]> to @a <[[]]>
      : tensor<8xf32> -> tensor<8xf32>
  reshard.redistribute @v from @a <[[x]]> to @a <[[]]> topology @t
      : tensor<8xf32> -> tensor<8xf32>
  // expected-error @+1 {{'reshard.redistribute' op names topology @s and @v names @t; a plan models one topology for all its tensors (a tensor that names none follows it)}}
  reshard.redistribute @w from @a <[[x]]> to @a <[[]]> topology @s
      : tensor<8xf32> -> tensor<8xf32>
}
