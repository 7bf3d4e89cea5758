// Links the NCCL plan and asks it about itself: no GPU needed for that.
#include "refit_plan_gpu.h"

#include <cstdio>

int main() {
  std::printf(
      "plan %016llx: %d ranks, %d tensors, rank 0 workspace %zu bytes\n",
      (unsigned long long)refit_plan_gpu_fingerprint(),
      refit_plan_gpu_num_ranks(), refit_plan_gpu_num_tensors(),
      refit_plan_gpu_workspace_bytes(0));
  return 0;
}
