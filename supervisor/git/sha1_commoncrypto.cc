// Sha1 (sha1.h) through CommonCrypto, which libSystem carries: macOS.
#include "supervisor/git/sha1.h"

#include <CommonCrypto/CommonDigest.h>

namespace guard {

struct Sha1::State {
  CC_SHA1_CTX ctx;
};

Sha1::Sha1() : state_(std::make_unique<State>()) {}
Sha1::~Sha1() = default;

bool Sha1::Init() { return CC_SHA1_Init(&state_->ctx) == 1; }

bool Sha1::Update(const void* data, size_t size) {
  // CC_LONG is 32 bits: a larger buffer goes in pieces.
  const unsigned char* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    CC_LONG n = size > (1u << 30) ? (1u << 30) : static_cast<CC_LONG>(size);
    if (CC_SHA1_Update(&state_->ctx, p, n) != 1) return false;
    p += n;
    size -= n;
  }
  return true;
}

bool Sha1::Final(unsigned char* out) { return CC_SHA1_Final(out, &state_->ctx) == 1; }

bool Sha1::Of(const void* data, size_t size, unsigned char* out) {
  Sha1 h;
  return h.Init() && h.Update(data, size) && h.Final(out);
}

}  // namespace guard
