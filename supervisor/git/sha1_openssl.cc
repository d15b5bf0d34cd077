// Sha1 (sha1.h) through OpenSSL's libcrypto, loaded at its first use: Linux.
#include "supervisor/git/sha1.h"

#include <openssl/evp.h>

#include "supervisor/base/lazy_library.h"

namespace guard {
namespace {

// libcrypto is loaded at the first hash (base/lazy_library.h): only the
// commands that write git objects hash.
LazyLibrary& Libcrypto() {
  static LazyLibrary library(GUARD_LIBCRYPTO_SONAME, "libssl3");
  return library;
}

#define GUARD_CRYPTO_LAZY(name) GUARD_LAZY_FUNCTION(Libcrypto(), name)
#define EVP_MD_CTX_new GUARD_CRYPTO_LAZY(EVP_MD_CTX_new)
#define EVP_MD_CTX_free GUARD_CRYPTO_LAZY(EVP_MD_CTX_free)
#define EVP_DigestInit_ex GUARD_CRYPTO_LAZY(EVP_DigestInit_ex)
#define EVP_DigestUpdate GUARD_CRYPTO_LAZY(EVP_DigestUpdate)
#define EVP_DigestFinal_ex GUARD_CRYPTO_LAZY(EVP_DigestFinal_ex)
#define EVP_Digest GUARD_CRYPTO_LAZY(EVP_Digest)
#define EVP_sha1 GUARD_CRYPTO_LAZY(EVP_sha1)

}  // namespace

struct Sha1::State {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  ~State() { EVP_MD_CTX_free(ctx); }
};

Sha1::Sha1() : state_(std::make_unique<State>()) {}
Sha1::~Sha1() = default;

bool Sha1::Init() { return state_->ctx != nullptr && EVP_DigestInit_ex(state_->ctx, EVP_sha1(), nullptr) == 1; }

bool Sha1::Update(const void* data, size_t size) { return EVP_DigestUpdate(state_->ctx, data, size) == 1; }

bool Sha1::Final(unsigned char* out) {
  unsigned int len = 0;
  return EVP_DigestFinal_ex(state_->ctx, out, &len) == 1 && len == kSize;
}

bool Sha1::Of(const void* data, size_t size, unsigned char* out) {
  unsigned int len = 0;
  return EVP_Digest(data, size, out, &len, EVP_sha1(), nullptr) == 1 && len == kSize;
}

}  // namespace guard
