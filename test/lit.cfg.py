# lit configuration of the reshard regression tests.
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "RESHARD"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["Inputs", "Unit", "lib", "gpu", "CMakeLists.txt", "lit.cfg.py",
                   "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.reshard_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%reshard_src_root", config.reshard_src_root))
config.substitutions.append(("%reshard_bin", config.reshard_tools_dir))
config.substitutions.append(("%reshard_obj_root", config.reshard_obj_root))
config.substitutions.append(
    ("%reshard_include", os.path.join(config.reshard_src_root, "include")))

# The tools built with AddressSanitizer (scripts/sanitize.sh): it reserves
# terabytes of address space, so tests that cap it cannot run.
if "-fsanitize=address" in getattr(config, "reshard_cxx_flags", ""):
    config.available_features.add("asan")

# Generated code is compiled and run when the toolchains are there
# (scripts/setup.sh installs OpenMPI; the CUDA toolkit comes with the
# machine image).
import shutil
if shutil.which("mpicxx") and shutil.which("mpirun"):
    config.available_features.add("mpi")
    # Loopback and shared memory only; root allowed (containers, CI).
    for k, v in {"OMPI_ALLOW_RUN_AS_ROOT": "1",
                 "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                 "OMPI_MCA_btl": "self,vader", "OMPI_MCA_pml": "ob1",
                 "OMPI_MCA_oob_tcp_if_include": "lo",
                 "HWLOC_COMPONENTS": "-gl"}.items():
        config.environment[k] = v
    config.substitutions.append(("%mpirun", "mpirun --oversubscribe"))
# The flow-level refit simulation (bench/sim_bench.py) compiles its replay
# program against SimGrid (scripts/setup.sh installs libsimgrid-dev).
if shutil.which("g++") and os.path.exists("/usr/include/simgrid/s4u.hpp") and any(
        os.path.exists(os.path.join(d, "libsimgrid.so"))
        for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
                  "/usr/lib", "/usr/local/lib")):
    config.available_features.add("simgrid")
# The DTensor benchmark test needs a python with torch: $RESHARD_TORCH_PYTHON
# or the venv bench/setup-bench.sh makes (checked by path, not by importing
# torch, which takes seconds).
torch_python = os.environ.get("RESHARD_TORCH_PYTHON") or os.path.join(
    config.reshard_obj_root, "bench-venv", "bin", "python")
import glob
if os.path.exists(torch_python) and (
        "RESHARD_TORCH_PYTHON" in os.environ or glob.glob(os.path.join(
            os.path.dirname(os.path.dirname(torch_python)), "lib", "python*",
            "site-packages", "torch", "distributed"))):
    config.available_features.add("torch")
    config.substitutions.append(("%torch_python", torch_python))
    # mpi4py beside it (scripts/setup.sh builds it there), for the runtime.
    if glob.glob(os.path.join(os.path.dirname(os.path.dirname(torch_python)),
                              "lib", "python*", "site-packages", "mpi4py")):
        config.available_features.add("mpi4py")
if os.access("/usr/lib/llvm-22/bin/clang-format", os.X_OK):
    config.available_features.add("clang-format-22")
cuda = "/usr/local/cuda"
if os.path.exists(os.path.join(cuda, "bin", "nvcc")) and (
        os.path.exists(os.path.join(cuda, "include", "nccl.h")) or
        os.path.exists("/usr/include/nccl.h")):
    config.available_features.add("cuda-nccl")
    config.substitutions.append(("%cuda", cuda))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.reshard_tools_dir, config.llvm_tools_dir]
tools = ["reshard-compile", "reshard-opt", "reshard-translate", "reshard-run",
         "reshard-proptest"]

# The libFuzzer targets exist only in a build configured with
# -DRESHARD_ENABLE_FUZZERS=ON (clang; scripts/fuzz.sh makes one); their short
# runs in test/fuzz need them all.
fuzzers = ["reshard-fuzz-mlir", "reshard-fuzz-json", "reshard-fuzz-planner"]
if all(os.path.isfile(os.path.join(config.reshard_tools_dir, f))
       for f in fuzzers):
    config.available_features.add("fuzzers")
    tools += fuzzers
llvm_config.add_tool_substitutions(tools, tool_dirs)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
