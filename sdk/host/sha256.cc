// sdk/host/sha256.cc: see plugboard/host/sha256.h.
#include "plugboard/host/sha256.h"

#include <openssl/evp.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace plugboard::host {
namespace {

// Fetched once: EVP_sha256() or EVP_Digest() would look the algorithm up in the provider
// (under a lock) every time. Freed when its module is unloaded (a deployer linking this
// kit is dlclose()d at exit; a bare pointer would then be lost and reported as a leak).
// Its destructor runs before OpenSSL's own cleanup, which the fetch registered first.
const EVP_MD* algorithm() {
  static const std::unique_ptr<EVP_MD, decltype(&EVP_MD_free)> md(
      EVP_MD_fetch(nullptr, "SHA256", nullptr), &EVP_MD_free);
  return md.get();
}

EVP_MD_CTX* context(void* c) { return static_cast<EVP_MD_CTX*>(c); }

}  // namespace

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex2(context(context_), algorithm(), nullptr);
}

Sha256::~Sha256() { EVP_MD_CTX_free(context(context_)); }

Sha256& Sha256::update(std::string_view bytes) {
  EVP_DigestUpdate(context(context_), bytes.data(), bytes.size());
  return *this;
}

Sha256Digest Sha256::digest() {
  Sha256Digest out{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(context(context_), out.data(), &size);
  return out;
}

Sha256Digest sha256(std::string_view bytes) {
  thread_local const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> c(EVP_MD_CTX_new(),
                                                                               &EVP_MD_CTX_free);
  Sha256Digest out{};
  unsigned int size = 0;
  EVP_DigestInit_ex2(c.get(), algorithm(), nullptr);
  EVP_DigestUpdate(c.get(), bytes.data(), bytes.size());
  EVP_DigestFinal_ex(c.get(), out.data(), &size);
  return out;
}

Expected<Sha256Digest> sha256File(int fd) {
  Sha256 sha;
  char buffer[1 << 16];
  off_t offset = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error(std::string("cannot read: ") + std::strerror(errno), Error::Code::kIo);
    if (n == 0) break;
    sha.update(std::string_view(buffer, static_cast<std::size_t>(n)));
    offset += n;
  }
  return sha.digest();
}

std::string hexOf(const Sha256Digest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * digest.size());
  for (unsigned char byte : digest) {
    hex += kDigits[byte >> 4];
    hex += kDigits[byte & 15];
  }
  return hex;
}

}  // namespace plugboard::host
