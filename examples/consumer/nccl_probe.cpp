// Links an NCCL plan and asks it about itself: no GPU needed for that.
// PLAN_HEADER and PLAN name another plan than refit_plan_gpu.
#ifndef PLAN
#define PLAN_HEADER "refit_plan_gpu.h"
#define PLAN refit_plan_gpu
#endif
#include PLAN_HEADER

#include <cstdio>

#define CALL2(plan, fn) plan##_##fn
#define CALL(plan, fn) CALL2(plan, fn)

int main() {
  std::printf(
      "plan %016llx: %d ranks, %d tensors, rank 0 workspace %zu bytes\n",
      (unsigned long long)CALL(PLAN, fingerprint)(), CALL(PLAN, num_ranks)(),
      CALL(PLAN, num_tensors)(), CALL(PLAN, workspace_bytes)(0));
  return 0;
}
