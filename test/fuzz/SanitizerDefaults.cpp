//===- SanitizerDefaults.cpp - Sanitizer options built into the fuzzers ---===//
//
// LLVM's BumpPtrAllocator poisons fresh slabs and unpoisons each allocation
// when the code that calls it is built with AddressSanitizer. reshard's
// code is; the packaged libMLIR.so is not, so allocations that libMLIR makes
// from a slab that our inline code poisoned stay poisoned and every later
// read of them is a false "use-after-poison". allow_user_poisoning=0 turns
// that manual poisoning off; heap, stack and global checks are unaffected.
// ASAN_OPTIONS / UBSAN_OPTIONS in the environment still override these.
//
//===----------------------------------------------------------------------===//

extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" const char *__ubsan_default_options() {
  return "print_stacktrace=1:halt_on_error=1";
}
