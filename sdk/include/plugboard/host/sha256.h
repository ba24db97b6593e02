// plugboard/host/sha256.h: SHA-256, the one implementation the runtime and the deployers
// use (OpenSSL's EVP underneath). A program that uses it links libcrypto itself
// (OpenSSL::Crypto); the rest of the kit does not need it.
//
// For what identifies content: trust pins on plugin files, the cache key of a started
// artifact, serve's outcome table, a deployer's cache of schemas. Thread-safe, except that
// one Sha256 object is for one thread at a time.
#ifndef PLUGBOARD_HOST_SHA256_H_
#define PLUGBOARD_HOST_SHA256_H_

#include <array>
#include <string>
#include <string_view>

#include "plugboard/host/expected.h"

namespace plugboard::host {

using Sha256Digest = std::array<unsigned char, 32>;

// A digest made of several pieces: update() any number of times, then digest() once.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256& update(std::string_view bytes);
  // REQUIRES: not called before on this object.
  Sha256Digest digest();

 private:
  void* context_;  // an EVP_MD_CTX, so that this header needs no OpenSSL
};

// The digest of one buffer, without allocating: the algorithm is fetched once and each
// thread keeps a context (serve digests every request body with it).
Sha256Digest sha256(std::string_view bytes);

// The digest of the file open as `fd`, read from its start with pread() (the descriptor's
// offset does not move). Errors (kIo): the file cannot be read.
Expected<Sha256Digest> sha256File(int fd);

// Lower-case hex, 64 characters: how a digest is written in files and messages.
std::string hexOf(const Sha256Digest& digest);

}  // namespace plugboard::host

#endif  // PLUGBOARD_HOST_SHA256_H_
