# reshard_add_plan: compile a layout file into a plan library at build time.
#
#   reshard_add_plan(<target>
#     INPUT <layout.json | layout.mlir>
#     BACKEND mpi | nccl
#     [PLAN_NAME <c-identifier>]      # prefix of the C entry points; default:
#                                     # <target> with non-identifier chars as _
#     [STAGING_BUDGET <bytes>]        # staging bytes per rank and step (1 GiB)
#     [MAX_OPS_PER_STEP <n>]          # point-to-point ops per rank and step
#     [STRATEGY balanced | direct]    # source selection (balanced)
#     [STATIC | SHARED])              # library kind (STATIC)
#
# At build time, in ${CMAKE_CURRENT_BINARY_DIR}/reshard/<target>/:
#   <plan>.mlir        the per-rank runtime program (reshard_rt dialect)
#   <plan>.report.json the plan's report (bytes per link class, bounds, time)
#   <plan>.cpp, <plan>.h  the generated code and its C header
# and a library <target> whose users get the header's directory on their
# include path and the backend's libraries (MPI::MPI_CXX, or the CUDA runtime
# and NCCL) on their link line. The plan is regenerated when the layout file
# or the reshard tools change.
#
# The tools are RESHARD_OPT_EXECUTABLE and RESHARD_TRANSLATE_EXECUTABLE
# (set by find_package(Reshard)), the runtime headers RESHARD_INCLUDE_DIR.
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

function(reshard_add_plan target)
  cmake_parse_arguments(ARG "STATIC;SHARED"
    "INPUT;BACKEND;PLAN_NAME;STAGING_BUDGET;MAX_OPS_PER_STEP;STRATEGY" "" ${ARGN})
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
  foreach(tool RESHARD_OPT_EXECUTABLE RESHARD_TRANSLATE_EXECUTABLE)
    if(NOT ${tool})
      message(FATAL_ERROR "${where}: ${tool} is not set; use find_package(Reshard)")
    endif()
  endforeach()

  get_filename_component(input "${ARG_INPUT}" ABSOLUTE)
  if(NOT EXISTS "${input}")
    message(FATAL_ERROR "${where}: INPUT ${input} does not exist")
  endif()
  if(input MATCHES "\\.json$")
    set(is_json TRUE)
  elseif(input MATCHES "\\.mlir$")
    set(is_json FALSE)
  else()
    message(FATAL_ERROR "${where}: INPUT must end in .json or .mlir: ${input}")
  endif()

  set(plan "${ARG_PLAN_NAME}")
  if(NOT plan)
    string(MAKE_C_IDENTIFIER "${target}" plan)
  endif()
  if(NOT plan MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "${where}: PLAN_NAME '${plan}' is not a C identifier")
  endif()
  foreach(number STAGING_BUDGET MAX_OPS_PER_STEP)
    if(DEFINED ARG_${number} AND NOT ARG_${number} MATCHES "^[1-9][0-9]*$")
      message(FATAL_ERROR "${where}: ${number} must be a positive integer, got '${ARG_${number}}'")
    endif()
  endforeach()
  set(strategy "${ARG_STRATEGY}")
  if(NOT strategy)
    set(strategy balanced)
  elseif(NOT strategy MATCHES "^(balanced|direct)$")
    message(FATAL_ERROR "${where}: STRATEGY must be balanced or direct, got '${strategy}'")
  endif()

  set(out "${CMAKE_CURRENT_BINARY_DIR}/reshard/${target}")
  # The report's path goes inside the pass pipeline, quoted (so spaces and
  # commas are fine); MLIR's pipeline parser cannot take these characters.
  if(out MATCHES "[\"{}]")
    message(FATAL_ERROR "${where}: the build directory ${out} contains '\"', "
      "'{' or '}', which a pass pipeline option cannot hold")
  endif()
  set(schedule "reshard-schedule")
  set(schedule_opts "")
  if(ARG_STAGING_BUDGET)
    list(APPEND schedule_opts "staging-budget=${ARG_STAGING_BUDGET}")
  endif()
  if(ARG_MAX_OPS_PER_STEP)
    list(APPEND schedule_opts "max-ops-per-step=${ARG_MAX_OPS_PER_STEP}")
  endif()
  if(schedule_opts)
    string(REPLACE ";" " " schedule_opts "${schedule_opts}")
    set(schedule "reshard-schedule{${schedule_opts}}")
  endif()
  set(pipeline "builtin.module(reshard-intersect,reshard-select-sources{strategy=${strategy}},${schedule},reshard-report{format=json output=\"${out}/${plan}.report.json\"},convert-reshard-to-runtime{plan-name=${plan}})")

  set(layout "${input}")
  set(import_cmd "")
  set(byproducts "")
  if(is_json)
    set(layout "${out}/${plan}.layout.mlir")
    set(import_cmd COMMAND "${RESHARD_TRANSLATE_EXECUTABLE}"
      --import-layout-json "${input}" -o "${layout}")
    set(byproducts BYPRODUCTS "${layout}")
  endif()
  add_custom_command(
    OUTPUT "${out}/${plan}.cpp" "${out}/${plan}.h" "${out}/${plan}.mlir"
           "${out}/${plan}.report.json"
    ${byproducts}
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${out}"
    ${import_cmd}
    COMMAND "${RESHARD_OPT_EXECUTABLE}" "${layout}"
      "--pass-pipeline=${pipeline}" -o "${out}/${plan}.mlir"
    COMMAND "${RESHARD_TRANSLATE_EXECUTABLE}" --reshard-to-cpp
      --backend=${ARG_BACKEND} "${out}/${plan}.mlir" -o "${out}/${plan}.cpp"
    COMMAND "${RESHARD_TRANSLATE_EXECUTABLE}" --reshard-to-cpp
      --backend=${ARG_BACKEND} --reshard-cpp-emit=header "${out}/${plan}.mlir"
      -o "${out}/${plan}.h"
    DEPENDS "${input}" "${RESHARD_OPT_EXECUTABLE}" "${RESHARD_TRANSLATE_EXECUTABLE}"
    COMMENT "reshard: compiling ${ARG_INPUT} into plan ${plan} (${ARG_BACKEND})"
    VERBATIM)

  set(kind STATIC)
  if(ARG_SHARED)
    set(kind SHARED)
  endif()
  add_library(${target} ${kind} "${out}/${plan}.cpp" "${out}/${plan}.h")
  target_compile_features(${target} PUBLIC cxx_std_17)
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${target}
    PUBLIC "${out}" PRIVATE "${RESHARD_INCLUDE_DIR}")
  _reshard_plan_backend_libs(${target} ${ARG_BACKEND})
  set_property(TARGET ${target} PROPERTY RESHARD_PLAN_NAME "${plan}")
  set_property(TARGET ${target} PROPERTY RESHARD_PLAN_DIR "${out}")
endfunction()
