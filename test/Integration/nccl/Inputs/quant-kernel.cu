// The NCCL backend's quantize kernels (the shard's scales and payload, and
// the fused pack), instantiated alone so that their PTX can be read
// (quant-kernel-ptx.test).
#include "reshard/ExecutionEngine/QuantizeKernels.h"

cudaError_t probe(const reshard::engine::QuantLaunch &q, const void *in,
                  uint8_t *out, void *scales) {
  return reshard::engine::launch_quantize(q, in, out, scales, 0);
}

cudaError_t probe_pack(const reshard::engine::QuantLaunch &q,
                       const reshard::engine::QuantCopyBox &b, const void *in,
                       const void *scales, uint8_t *out) {
  return reshard::engine::launch_quant_copy(q, b, in, scales, out, 0);
}
