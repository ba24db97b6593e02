#include "core/manifests/trust.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include <openssl/crypto.h>
#include <plugboard/host/sha256.h>

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

Status checkPin(int fd, const std::string& name, const std::string& version,
                const std::filesystem::path& file, const TrustPolicy& policy) {
  const TrustPolicy::Pin* pin = findPin(name, version, policy);
  if (pin == nullptr) return Status::Ok();
  auto sha = host::sha256File(fd);
  if (!sha) return sha.error();
  const std::string digest = host::hexOf(*sha);
  if (digest != toLower(pin->second)) {
    return Error("plugin '" + name + "' " + version + " in " + file.string() + " has SHA-256 " +
                     digest + ", but the config pins '" + pin->first + "' to " + pin->second +
                     "; reinstall the plugin or update the pin",
                 Error::Code::kUntrusted);
  }
  return Status::Ok();
}

}  // namespace plugboard::core
