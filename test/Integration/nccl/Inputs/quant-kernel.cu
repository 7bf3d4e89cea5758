// The NCCL backend's quantize kernel, instantiated alone so that its PTX
// can be read (quant-kernel-ptx.test).
#include "reshard/ExecutionEngine/QuantizeKernels.h"

cudaError_t probe(const reshard::engine::QuantLaunch &q, const void *in,
                  uint8_t *out, void *scales) {
  return reshard::engine::launch_quantize(q, in, out, scales, 0);
}
