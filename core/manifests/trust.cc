#include "core/manifests/trust.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/base/read_file.h"
#include "core/base/text.h"

namespace plugboard::core {
namespace {

// OpenSSL initialises itself (and reads its configuration) on first use. Done then on one of
// the runtime's worker threads, that thread's share of the initialisation is never freed
// (LeakSanitizer reports it at exit); done here, at program start, it happens on the main
// thread, as OpenSSL expects.
[[maybe_unused]] const bool kCryptoInitialised =
    OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, nullptr) == 1;

}  // namespace

Status checkFileTrust(int fd, const std::filesystem::path& file, const TrustPolicy& policy) {
  return host::checkOpenedFile(fd, file, policy.rules());
}

Status checkDirectoryTrust(const std::filesystem::path& dir, const TrustPolicy& policy) {
  const host::TrustRules rules = policy.rules();
  if (Status st = host::checkDirectory(dir, rules, "plugin directory"); !st) return st;
  return host::checkDirectoriesAbove(dir, rules);
}

Expected<std::string> readTrustedFile(const std::filesystem::path& file, const TrustPolicy& policy,
                                      const std::string& what) {
  auto opened = host::openTrusted(file, policy.rules());
  if (!opened && opened.error().code() == Error::Code::kUntrusted) {
    return host::refusal(file, opened.error()).error();
  }
  if (!opened) {
    return Error(file.string() + ": cannot read the " + what + ": " + opened.error().message(),
                 Error::Code::kIo);
  }
  return readOpenedFile(opened->fd.get(), file, what);
}

const TrustPolicy::Pin* findPin(const std::string& name, const std::string& version,
                                const TrustPolicy& policy) {
  const std::string lowered = toLower(name);
  auto pin = policy.pins.find(lowered + "@" + version);
  if (pin == policy.pins.end()) pin = policy.pins.find(lowered);
  return pin == policy.pins.end() ? nullptr : &*pin;
}

Expected<std::string> sha256Hex(int fd) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    return Error("cannot compute SHA-256: OpenSSL failed to initialise");
  }
  char buf[1 << 16];
  off_t offset = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error(std::string("cannot read: ") + std::strerror(errno), Error::Code::kIo);
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buf, static_cast<std::size_t>(n));
    offset += n;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  std::string hex;
  for (unsigned i = 0; i < len; ++i) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", digest[i]);
    hex += two;
  }
  return hex;
}

Status checkPin(int fd, const std::string& name, const std::string& version,
                const std::filesystem::path& file, const TrustPolicy& policy) {
  const TrustPolicy::Pin* pin = findPin(name, version, policy);
  if (pin == nullptr) return Status::Ok();
  auto digest = sha256Hex(fd);
  if (!digest) return digest.error();
  if (*digest != toLower(pin->second)) {
    return Error("plugin '" + name + "' " + version + " in " + file.string() + " has SHA-256 " +
                     *digest + ", but the config pins '" + pin->first + "' to " + pin->second +
                     "; reinstall the plugin or update the pin",
                 Error::Code::kUntrusted);
  }
  return Status::Ok();
}

}  // namespace plugboard::core
