# reshard_add_plan: compile a layout file into a plan library at build time.
#
#   reshard_add_plan(<target>
#     INPUT <layout.json | layout.mlir>
#     BACKEND mpi | nccl
#     [PLAN_NAME <c-identifier>]      # prefix of the C entry points; default:
#                                     # <target> with non-identifier chars as _
#     [STAGING_BUDGET <bytes>]        # message bytes a rank holds at any
#                                     # instant (a step's messages, what a
#                                     # transit keeps, with RECEIVES_AHEAD
#                                     # the next step's receives): an
#                                     # integer, or with a suffix K, M or G
#                                     # (default 1G); allocate the plan's
#                                     # <name>_workspace_bytes, which adds
#                                     # 16-byte alignment
#     [MAX_OPS_PER_STEP <n>]          # point-to-point ops per rank and step
#     [STRATEGY balanced | direct]    # source selection (balanced)
#     [TRANSITS auto | always | never]        # holder streams through
#                                     # another GPU of a domain (auto)
#     [RELAY_TREE auto | never | bound | always] # a domain fed by another
#                                     # domain's entries (auto)
#     [RELAY_TREE_MAX_STREAMS <n>]    # with RELAY_TREE auto (270000)
#     [RECEIVES_AHEAD]                # the MPI backend posts each step's
#                                     # next receives while it is in flight
#     [STATIC | SHARED])              # library kind (STATIC)
#
# With BACKEND nccl the plan is compiled as CUDA (by nvcc) when the project
# enables the CUDA language (enable_language(CUDA) before this call), and as
# C++ otherwise. A plan with quantized destinations runs a CUDA kernel, so
# it needs CUDA enabled: as C++ it stops at an #error that says so.
# At build time, in ${CMAKE_CURRENT_BINARY_DIR}/reshard/<target>/:
#   <plan>.mlir        the per-rank runtime program (reshard_rt dialect)
#   <plan>.report.json the plan's report (bytes per link class, bounds, time)
#   <plan>.cpp, <plan>.h  the generated code and its C header
# and a library <target> whose users get the header's directory and the
# engine's (for ErrorCodes.h, which the header includes) on their include
# path and the backend's libraries (MPI::MPI_CXX, or the CUDA runtime
# and NCCL) on their link line. The plan is regenerated when the layout file
# or the reshard tools change.
#
# One command makes all four: reshard-compile (RESHARD_COMPILE_EXECUTABLE,
# set by find_package(Reshard)), which plans with reshard-plan-pipeline. The
# execution engine's headers are RESHARD_INCLUDE_DIR.
include_guard(GLOBAL)

function(_reshard_plan_backend_libs target backend)
  if(backend STREQUAL "mpi")
    find_package(MPI REQUIRED COMPONENTS CXX)
    target_link_libraries(${target} PUBLIC MPI::MPI_CXX)
    return()
  endif()
  find_package(CUDAToolkit REQUIRED)
  find_library(RESHARD_NCCL_LIBRARY nccl
    HINTS ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_HOME PATH_SUFFIXES lib lib64)
  find_path(RESHARD_NCCL_INCLUDE_DIR nccl.h
    HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_HOME PATH_SUFFIXES include)
  if(NOT RESHARD_NCCL_LIBRARY OR NOT RESHARD_NCCL_INCLUDE_DIR)
    message(FATAL_ERROR "reshard_add_plan(${target}): BACKEND nccl needs NCCL "
      "(nccl.h and libnccl); set NCCL_HOME or CMAKE_PREFIX_PATH")
  endif()
  # The CUDA runtime only: plans never call the driver API (no -lcuda).
  target_include_directories(${target} PUBLIC ${RESHARD_NCCL_INCLUDE_DIR})
  target_link_libraries(${target} PUBLIC CUDA::cudart ${RESHARD_NCCL_LIBRARY})
endfunction()

# Fails the configure when keyword <kw> of reshard_add_plan was given a
# value that does not match <pattern>, saying it must be <what>.
macro(_reshard_plan_check kw pattern what)
  if(DEFINED ARG_${kw} AND NOT ARG_${kw} MATCHES "${pattern}")
    message(FATAL_ERROR "${where}: ${kw} must be ${what}, got '${ARG_${kw}}'")
  endif()
endmacro()

function(reshard_add_plan target)
  cmake_parse_arguments(ARG "STATIC;SHARED;RECEIVES_AHEAD"
    "INPUT;BACKEND;PLAN_NAME;STAGING_BUDGET;MAX_OPS_PER_STEP;STRATEGY;TRANSITS;RELAY_TREE;RELAY_TREE_MAX_STREAMS"
    "" ${ARGN})
  set(where "reshard_add_plan(${target})")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "${where}: unexpected arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  # A keyword given without its value (e.g. `STAGING_BUDGET` last) would
  # otherwise be dropped silently and its default used.
  if(ARG_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "${where}: missing value for ${ARG_KEYWORDS_MISSING_VALUES}")
  endif()
  if(NOT ARG_INPUT)
    message(FATAL_ERROR "${where}: INPUT <layout.json|layout.mlir> is required")
  endif()
  if(NOT ARG_BACKEND MATCHES "^(mpi|nccl)$")
    message(FATAL_ERROR "${where}: BACKEND must be mpi or nccl, got '${ARG_BACKEND}'")
  endif()
  if(ARG_STATIC AND ARG_SHARED)
    message(FATAL_ERROR "${where}: STATIC and SHARED are exclusive")
  endif()
  if(NOT RESHARD_COMPILE_EXECUTABLE)
    message(FATAL_ERROR "${where}: RESHARD_COMPILE_EXECUTABLE is not set; use find_package(Reshard)")
  endif()

  get_filename_component(input "${ARG_INPUT}" ABSOLUTE)
  if(NOT EXISTS "${input}")
    message(FATAL_ERROR "${where}: INPUT ${input} does not exist")
  endif()
  if(NOT input MATCHES "\\.(json|mlir)$")
    message(FATAL_ERROR "${where}: INPUT must end in .json or .mlir: ${input}")
  endif()

  set(plan "${ARG_PLAN_NAME}")
  if(NOT plan)
    string(MAKE_C_IDENTIFIER "${target}" plan)
  endif()
  if(NOT plan MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${where}: PLAN_NAME '${plan}' is not a C identifier")
  endif()
  _reshard_plan_check(STAGING_BUDGET "^[1-9][0-9]*[KMG]?$"
    "a positive integer, optionally with a suffix K, M or G")
  _reshard_plan_check(MAX_OPS_PER_STEP "^[1-9][0-9]*$" "a positive integer")
  set(strategy "${ARG_STRATEGY}")
  if(NOT strategy)
    set(strategy balanced)
  elseif(NOT strategy MATCHES "^(balanced|direct)$")
    message(FATAL_ERROR "${where}: STRATEGY must be balanced or direct, got '${strategy}'")
  endif()

  _reshard_plan_check(TRANSITS "^(auto|always|never)$" "auto, always or never")
  _reshard_plan_check(RELAY_TREE "^(auto|never|bound|always)$"
    "auto, never, bound or always")
  _reshard_plan_check(RELAY_TREE_MAX_STREAMS "^[0-9]+$" "a non-negative integer")

  set(out "${CMAKE_CURRENT_BINARY_DIR}/reshard/${target}")
  set(planning --strategy=${strategy})
  foreach(option TRANSITS RELAY_TREE RELAY_TREE_MAX_STREAMS)
    if(DEFINED ARG_${option})
      string(TOLOWER "${option}" flag)
      string(REPLACE "_" "-" flag "${flag}")
      list(APPEND planning --${flag}=${ARG_${option}})
    endif()
  endforeach()
  if(ARG_RECEIVES_AHEAD)
    list(APPEND planning --receives-ahead)
  endif()
  if(ARG_STAGING_BUDGET)
    list(APPEND planning --staging-budget=${ARG_STAGING_BUDGET})
  endif()
  if(ARG_MAX_OPS_PER_STEP)
    list(APPEND planning --max-ops-per-step=${ARG_MAX_OPS_PER_STEP})
  endif()
  add_custom_command(
    OUTPUT "${out}/${plan}.cpp" "${out}/${plan}.h" "${out}/${plan}.mlir"
           "${out}/${plan}.report.json"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${out}"
    COMMAND "${RESHARD_COMPILE_EXECUTABLE}" "${input}" --backend=${ARG_BACKEND}
      --plan-name=${plan} ${planning}
      -o "${out}/${plan}.cpp" "--header=${out}/${plan}.h"
      "--mlir=${out}/${plan}.mlir" "--report=${out}/${plan}.report.json"
    DEPENDS "${input}" "${RESHARD_COMPILE_EXECUTABLE}"
    COMMENT "reshard: compiling ${ARG_INPUT} into plan ${plan} (${ARG_BACKEND})"
    VERBATIM)

  set(kind STATIC)
  if(ARG_SHARED)
    set(kind SHARED)
  endif()
  add_library(${target} ${kind} "${out}/${plan}.cpp" "${out}/${plan}.h")
  target_compile_features(${target} PUBLIC cxx_std_17)
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(ARG_BACKEND STREQUAL "nccl" AND "CUDA" IN_LIST languages)
    # nvcc compiles the plan: one that quantizes on the GPU has a kernel.
    set_source_files_properties("${out}/${plan}.cpp" PROPERTIES LANGUAGE CUDA)
    target_compile_features(${target} PRIVATE cuda_std_17)
    # The shared runtime the backend links (CUDA::cudart), not a second,
    # static one.
    set_target_properties(${target} PROPERTIES CUDA_RUNTIME_LIBRARY Shared)
  endif()
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_SHARED)
    # The plan list that Python's reshard.Plan.load reads binds inside this
    # library, even with other plan libraries loaded.
    target_link_options(${target} PRIVATE "LINKER:-Bsymbolic")
  endif()
  # Public both: the plan's header includes the engine's ErrorCodes.h.
  target_include_directories(${target}
    PUBLIC "${out}" "${RESHARD_INCLUDE_DIR}")
  _reshard_plan_backend_libs(${target} ${ARG_BACKEND})
  set_property(TARGET ${target} PROPERTY RESHARD_PLAN_NAME "${plan}")
  set_property(TARGET ${target} PROPERTY RESHARD_PLAN_DIR "${out}")
endfunction()
