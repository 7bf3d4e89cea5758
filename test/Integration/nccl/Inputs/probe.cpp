// Calls a generated NCCL plan through its C header on a machine that may
// have no GPU: every entry point answers, and _run returns an error code
// with a message instead of crashing.
#include "plan.h"

#include <cstdio>

int main() {
  char err[512] = "";
  std::printf("ranks %d tensors %d first '%s' fingerprint %016llx\n",
              reshard_plan_num_ranks(), reshard_plan_num_tensors(),
              reshard_plan_tensor_name(0),
              static_cast<unsigned long long>(reshard_plan_fingerprint()));
  std::printf("workspace of rank 0: %zu, out of range: %zu\n",
              reshard_plan_workspace_bytes(0),
              reshard_plan_workspace_bytes(1000));
  std::printf("src bytes rank 0 tensor 0: %lld, bad tensor: %lld\n",
              static_cast<long long>(reshard_plan_src_bytes(0, 0)),
              static_cast<long long>(reshard_plan_src_bytes(0, 99)));
  int rc = reshard_plan_run(0, nullptr, nullptr, nullptr, nullptr, nullptr, 0,
                            err, sizeof(err));
  std::printf("run without a communicator: %d: %s\n", rc, err);
  return 0;
}
