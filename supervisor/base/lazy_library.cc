#include "supervisor/base/lazy_library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>

namespace guard {

void* LazyLibrary::Symbol(const char* symbol) {
  std::call_once(once_, [this] { handle_ = dlopen(soname_, RTLD_LAZY | RTLD_LOCAL); });
  void* address = handle_ != nullptr ? dlsym(handle_, symbol) : nullptr;
  if (address == nullptr) {
    const char* why = dlerror();
    std::fprintf(stderr, "guard: %s (%s, from the package %s) cannot be used: %s\n", soname_, symbol, package_,
                 why != nullptr ? why : "not found");
    std::fflush(stderr);
    _exit(125);
  }
  return address;
}

}  // namespace guard
