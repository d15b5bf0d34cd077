// SHA-1, as git names objects and packs: one small twin per platform,
// chosen at build time (CMakeLists.txt): OpenSSL's libcrypto on Linux
// (sha1_openssl.cc), CommonCrypto, part of libSystem, on macOS
// (sha1_commoncrypto.cc). What is hashed, and how, is the callers' logic.
#pragma once

#include <cstddef>
#include <memory>

namespace guard {

class Sha1 {
 public:
  static constexpr size_t kSize = 20;
  Sha1();
  ~Sha1();
  Sha1(const Sha1&) = delete;
  Sha1& operator=(const Sha1&) = delete;
  // False when the platform's SHA-1 cannot be used; then nothing else may be called.
  bool Init();
  bool Update(const void* data, size_t size);
  // Writes kSize bytes to `out`; the object is spent.
  bool Final(unsigned char* out);

  // The digest of one buffer.
  static bool Of(const void* data, size_t size, unsigned char* out);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace guard
