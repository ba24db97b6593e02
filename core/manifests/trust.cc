#include "core/manifests/trust.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "core/base/text.h"

namespace plugboard::core {
namespace {

// OpenSSL initialises itself (and reads its configuration) on first use. Done then on one of
// the runtime's worker threads, that thread's share of the initialisation is never freed
// (LeakSanitizer reports it at exit); done here, at program start, it happens on the main
// thread, as OpenSSL expects.
[[maybe_unused]] const bool kCryptoInitialised =
    OPENSSL_init_crypto(OPENSSL_INIT_LOAD_CONFIG, nullptr) == 1;

std::string octalMode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

std::string userName(uid_t uid) {
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return "uid " + std::to_string(uid);
}

Status checkStat(const struct stat& st, const std::filesystem::path& path, const char* what,
                 const TrustPolicy& policy) {
  if (!policy.strict) return Status::Ok();
  const std::string p = path.string();
  constexpr auto kUntrusted = Error::Code::kUntrusted;
  if (st.st_mode & S_IWOTH) {
    return Error(std::string(what) + " is writable by others (mode " + octalMode(st.st_mode) +
                     "); run chmod o-w " + p,
                 kUntrusted);
  }
  if (st.st_mode & S_IWGRP) {
    return Error(std::string(what) + " is writable by group (mode " + octalMode(st.st_mode) +
                     "); run chmod g-w " + p,
                 kUntrusted);
  }
  const uid_t self = ::geteuid();
  const bool owner_ok = st.st_uid == 0 || st.st_uid == self ||
                        std::find(policy.extra_owners.begin(), policy.extra_owners.end(),
                                  st.st_uid) != policy.extra_owners.end();
  if (!owner_ok) {
    return Error(std::string(what) + " is owned by " + userName(st.st_uid) + ", not by root or " +
                     userName(self) + " (the runtime's user); run chown " + userName(self) + " " + p,
                 kUntrusted);
  }
  return Status::Ok();
}

}  // namespace

Status checkFileTrust(int fd, const std::filesystem::path& file, const TrustPolicy& policy) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return Error(std::string("cannot stat: ") + std::strerror(errno), Error::Code::kIo);
  }
  return checkStat(st, file, "file", policy);
}

Status checkDirectoryTrust(const std::filesystem::path& dir, const TrustPolicy& policy) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return Error(std::string("cannot read plugin directory: ") + std::strerror(errno),
                 Error::Code::kIo);
  }
  return checkStat(st, dir, "plugin directory", policy);
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
  const std::string lowered = toLower(name);
  auto pin = policy.pins.find(lowered + "@" + version);
  if (pin == policy.pins.end()) pin = policy.pins.find(lowered);
  if (pin == policy.pins.end()) return Status::Ok();
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
