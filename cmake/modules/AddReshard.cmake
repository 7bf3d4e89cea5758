# Thin wrappers over plain CMake: every reshard library and tool links the
# shared libMLIR.so and libLLVM.so (Debian packages them that way), which keeps
# binaries small and links fast.

# add_reshard_library(name SRCS... [DEPENDS targets...] [LINK_LIBS libs...])
function(add_reshard_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_LINK_LIBS} MLIR LLVM)
endfunction()

# add_reshard_tool(name SRCS... [LINK_LIBS libs...] [NO_INSTALL])
# NO_INSTALL: a test tool, built for the suite only.
function(add_reshard_tool name)
  cmake_parse_arguments(ARG "NO_INSTALL" "" "LINK_LIBS" ${ARGN})
  add_executable(${name} ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  target_link_libraries(${name} PRIVATE ${ARG_LINK_LIBS} MLIR LLVM)
  if(NOT ARG_NO_INSTALL)
    install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endfunction()
