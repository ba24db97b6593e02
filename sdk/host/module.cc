#include "plugboard/host/module.h"

#include <dlfcn.h>
#include <link.h>
#include <fcntl.h>

#include <mutex>
#include <vector>

#include <nlohmann/json.hpp>

namespace plugboard::host {

std::string dlerrorText(const std::exception& e) {
  std::string_view what = e.what();
  constexpr std::string_view kMarker = "dlerror system message: ";
  if (auto pos = what.find(kMarker); pos != std::string_view::npos) {
    what.remove_prefix(pos + kMarker.size());
    if (what.ends_with(")")) what.remove_suffix(1);
  }
  return std::string(what);
}

namespace {

// The loading lock of module.h. Recursive: a library's constructors or destructors run
// inside dlopen or dlclose and may load or unload another module through this kit.
std::recursive_mutex& loadingLock() {
  static std::recursive_mutex lock;
  return lock;
}

}  // namespace

namespace {

// Whether a loaded object is known by the name `path` (by name alone: dlopen with
// RTLD_NOLOAD would also answer for the same file loaded under another name).
bool nameLoaded(const std::string& path) {
  auto match = [](dl_phdr_info* info, size_t, void* wanted) -> int {
    return info->dlpi_name != nullptr && *static_cast<const std::string*>(wanted) == info->dlpi_name;
  };
  std::string wanted = path;
  return ::dl_iterate_phdr(match, &wanted) != 0;
}

}  // namespace

std::string loadablePath(Fd& fd) {
  static std::mutex parked_mu;
  static auto* parked = new std::vector<Fd>();  // never closed: their names are taken
  for (;;) {
    const std::string path = "/proc/self/fd/" + std::to_string(fd.get());
    if (!nameLoaded(path)) return path;
    Fd moved(::fcntl(fd.get(), F_DUPFD_CLOEXEC, 0));
    if (moved.get() < 0) return path;  // out of descriptors: the load fails and says so
    std::lock_guard hold(parked_mu);
    parked->push_back(std::exchange(fd, std::move(moved)));
  }
}

Expected<SharedLibrary> openModuleFile(const std::filesystem::path& path, const std::string& who,
                                       const ModuleKind& kind) {
  try {
    namespace mode = boost::dll::load_mode;
    std::unique_lock lock(loadingLock());
    SharedLibrary so(new boost::dll::shared_library(path, mode::rtld_local | mode::rtld_now),
                     [](const boost::dll::shared_library* library) {
                       std::lock_guard unloading(loadingLock());
                       delete library;
                     });
    lock.unlock();
    if (!so->has(kind.alias)) {
      return Error(who + ": entry point '" + kind.alias + "' not found. Was it built with " +
                   kind.macro + " from the plugboard SDK?");
    }
    return so;
  } catch (const std::exception& e) {
    return Error(who + ": cannot load: " + dlerrorText(e));
  }
}

Status checkAbi(const std::string& who, std::uint32_t abi_major, std::uint32_t abi_minor,
                std::uint32_t struct_size, std::size_t min_size) {
  const std::string got = std::to_string(abi_major) + "." + std::to_string(abi_minor);
  const std::string ours =
      std::to_string(PLUGBOARD_ABI_MAJOR) + "." + std::to_string(PLUGBOARD_ABI_MINOR);
  if (abi_major != PLUGBOARD_ABI_MAJOR) {
    return Error("Wrong ABI version on " + who + ". Got version " + got +
                 ", supported version is " + ours + ". Rebuild it against this SDK.");
  }
  if (abi_minor > PLUGBOARD_ABI_MINOR) {
    return Error(who + " needs ABI " + got + ", this runtime supports up to " + ours +
                 ". Upgrade plugboard or rebuild it against this SDK.");
  }
  if (struct_size < min_size) {
    return Error(who + ": API table is " + std::to_string(struct_size) +
                 " bytes, ABI 1.0 needs at least " + std::to_string(min_size));
  }
  return Status::Ok();
}

HostServices::HostServices(LogFn log, CallLogFn call_log)
    : log_(std::move(log)), call_log_(std::move(call_log)) {
  abi_.struct_size = sizeof(plugboard_host);
  abi_.ctx = this;
  abi_.log = [](void* ctx, int level, const char* message, size_t len) {
    const auto* self = static_cast<const HostServices*>(ctx);
    if (self->log_) self->log_(level, std::string_view(message, len));
  };
  abi_.log_call = [](void* ctx, uint64_t call_id, int level, const char* message, size_t len) {
    const auto* self = static_cast<const HostServices*>(ctx);
    if (self->call_log_) {
      self->call_log_(call_id, level, std::string_view(message, len));
    } else if (self->log_) {
      self->log_(level, std::string_view(message, len));
    }
  };
}

void collectText(void* ctx, const char* json, size_t len) {
  static_cast<std::optional<std::string>*>(ctx)->emplace(json, len);
}

std::string errorMessage(const std::optional<std::string>& result_json) {
  if (!result_json) return "no reason given";
  const auto j = nlohmann::json::parse(*result_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_object()) {
    if (auto m = j.find("message"); m != j.end() && m->is_string()) return m->get<std::string>();
  }
  return "no reason given";
}

}  // namespace plugboard::host
