// A shared library loaded at its first use instead of at guard's start:
// libgit2 (with the 14 libraries it brings: krb5, ssh2, mbedtls, ...) and
// libcrypto are needed only by the commands that write git objects, and
// loading them cost every guard command 3 to 3.5 ms of its start
// (docs/performance.md, "Starting a session"). Linux only: the macOS build
// links its own static libgit2 and CommonCrypto.
#pragma once

#include <mutex>

namespace guard {

class LazyLibrary {
 public:
  // `soname`: what dlopen loads ("libgit2.so.1.5"); `package`: the Debian
  // package that has it, for the error line.
  constexpr LazyLibrary(const char* soname, const char* package) : soname_(soname), package_(package) {}
  LazyLibrary(const LazyLibrary&) = delete;
  LazyLibrary& operator=(const LazyLibrary&) = delete;

  // The address of `symbol`, the library loaded the first time (once per
  // process, thread-safe). A library or a symbol that cannot be found ends
  // guard with one line on stderr and exit status 125: guard's package
  // depends on both, so only a broken installation gets there.
  void* Symbol(const char* symbol);

 private:
  const char* soname_;
  const char* package_;
  std::once_flag once_;
  void* handle_ = nullptr;
};

}  // namespace guard

// The function `name` of `library` (a LazyLibrary&), as a pointer of its
// own type (its declaration's, from the library's header), looked up once
// per place it is called from.
#define GUARD_LAZY_FUNCTION(library, name)                                               \
  ([] {                                                                                 \
    static const auto fn = reinterpret_cast<decltype(&::name)>((library).Symbol(#name)); \
    return fn;                                                                          \
  }())
