"builtin.module"() ({
  "reshard.topology"() <{gpus_per_node = 2 : i64, nic_GBps_per_gpu = 5.000000e+01 : f64, nic_latency_us = 5.000000e+00 : f64, nvl_domain_size = 2 : i64, nvlink_GBps_per_gpu = 4.500000e+02 : f64, nvlink_latency_us = 1.000000e+00 : f64, sym_name = "t"}> : () -> ()
  "reshard.mesh"() <{axes = ["x", "y"], ranks = array<i64: 0, 1, 2, 3>, shape = array<i64: 2, 2>, sym_name = "a"}> : () -> ()
  "reshard.mesh"() <{axes = ["z"], ranks = array<i64: 4, 5>, shape = array<i64: 2>, sym_name = "b"}> : () -> ()
  "reshard.redistribute"() <{dst_mesh = @b, dst_sharding = #reshard.sharding<[[], []]>, dst_type = tensor<4x7xf32>, src_mesh = @a, src_sharding = #reshard.sharding<[[x], [y]]>, src_type = tensor<4x7xf32>, sym_name = "w", topology = @t}> : () -> ()
  "reshard.redistribute"() <{dst_mesh = @b, dst_sharding = #reshard.sharding<[[z]]>, dst_type = tensor<5xi8>, src_mesh = @a, src_sharding = #reshard.sharding<[[y] blocks [1, 4]]>, src_type = tensor<5xi8>, sym_name = "v", topology = @t}> : () -> ()
}) : () -> ()

