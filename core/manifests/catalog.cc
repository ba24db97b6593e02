#include "core/manifests/catalog.h"

#include "core/manifests/file_handle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <system_error>

#include "core/manifests/claims.h"
#include "core/manifests/elf_section.h"
#include "plugboard/abi.h"

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

bool looksLikePlugin(const fs::path& p) {
  const std::string name = p.filename().string();
  if (name.empty() || name[0] == '.') return false;
  return name.ends_with(".so") || name.find(".so.") != std::string::npos;
}

// The value of the first `key = "value"` (or 'value') in `text` at or after `from`, or "".
std::string quotedValue(const std::string& text, std::string_view key, std::size_t from) {
  for (auto at = text.find(key, from); at != std::string::npos; at = text.find(key, at + 1)) {
    if (at > 0 && (std::isalnum(static_cast<unsigned char>(text[at - 1])) || text[at - 1] == '_'))
      continue;
    std::size_t i = at + key.size();
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size() || text[i] != '=') continue;
    ++i;
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size() || (text[i] != '"' && text[i] != '\'')) continue;
    const auto end = text.find(text[i], i + 1);
    if (end == std::string::npos) return "";
    return text.substr(i + 1, end - i - 1);
  }
  return "";
}

// Why a Python plugin written with the SDK (a *.py file that imports plugboard_sdk) is not
// served from a plugin directory, and how it is served; nullopt for any other file. A
// plugin directory holds native plugins, whose manifest is read without running any of
// their code; a Python plugin's declaration is known only by running it, which its
// deployer does for a registry entry (docs/decisions.md, "A Python plugin in a plugin
// directory").
std::optional<std::string> pythonPluginRefusal(const fs::path& file) {
  const std::string name = file.filename().string();
  if (name.empty() || name[0] == '.' || !name.ends_with(".py")) return std::nullopt;
  // Its first 64 KiB, read only from a regular file: a FIFO or a device named *.py must
  // not block or feed the scan (O_NONBLOCK, then fstat on the opened descriptor).
  const int fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::string text;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    text.resize(64 * 1024);
    std::size_t got = 0;
    for (ssize_t n = 0; got < text.size(); got += static_cast<std::size_t>(n)) {
      n = ::read(fd, text.data() + got, text.size() - got);
      if (n <= 0) break;
    }
    text.resize(got);
  }
  ::close(fd);
  if (text.find("plugboard_sdk") == std::string::npos) return std::nullopt;
  // The declaration's name and version, when they can be seen without running it.
  const auto declared = text.find("plugin(");
  std::string plugin = quotedValue(text, "name", declared == std::string::npos ? 0 : declared);
  std::string version =
      quotedValue(text, "version", declared == std::string::npos ? 0 : declared);
  if (!isValidPluginName(plugin)) plugin = "NAME";
  if (!Version::parse(version)) version = "VERSION";
  std::error_code ec;
  const fs::path absolute = fs::absolute(file, ec).lexically_normal();
  return "a Python plugin (it uses plugboard_sdk) is not loaded from a plugin directory, which "
         "holds native plugins (.so files): serve it through a registry entry, [plugins." +
         plugin + ".\"" + version + "\"] python = { path = \"" + absolute.string() +
         "\" }, in the file given to --registry (or `registry` in plugboard.toml); see "
         "docs/python-plugins.md";
}

}  // namespace

Expected<CatalogEntry> readPluginFile(const fs::path& file, const TrustPolicy& policy,
                                      std::string_view kind) {
  auto opened = host::openTrusted(file, policy.rules());
  if (!opened) return opened.error();
  return readPluginManifest(opened->fd.get(), file, policy, kind);
}

Expected<CatalogEntry> readPluginManifest(int fd, const fs::path& file, const TrustPolicy& policy,
                                          std::string_view kind) {
  if (Status st = checkFileTrust(fd, file, policy); !st) return st.error();
  auto section = readElfSection(fd, PLUGBOARD_MANIFEST_SECTION);
  if (!section) {
    if (section.error().code() == Error::Code::kNotFound) {
      return Error("no plugboard manifest (no " PLUGBOARD_MANIFEST_SECTION
                   " section); was it built with PLUGBOARD_PLUGIN from the plugboard SDK?");
    }
    return section.error();
  }
  auto manifest = parseManifest(*section);
  if (!manifest) return manifest.error();
  if (manifest->kind != kind) {
    return Error(manifest->kind == "deployer"
                     ? "'" + manifest->name +
                           "' is a deployer module, not a plugin; put it in a deployer directory"
                     : "'" + manifest->name +
                           "' is a plugin, not a deployer module; put it in a plugin directory");
  }
  if (manifest->abi != PLUGBOARD_ABI_MAJOR) {
    return Error((kind == "deployer" ? "deployer '" : "plugin '") + manifest->name +
                 "' was built for plugboard ABI " + std::to_string(manifest->abi) +
                 ", this runtime supports ABI " + std::to_string(PLUGBOARD_ABI_MAJOR) +
                 "; rebuild it against this SDK");
  }
  if (Status st = checkPin(fd, manifest->name, manifest->version.text(), file, policy);
      !st) {
    return st.error();
  }
  std::string label = manifest->name + "@" + manifest->version.text();
  return CatalogEntry{std::move(*manifest), file, std::move(label)};
}

std::vector<fs::path> listPluginFiles(const std::vector<fs::path>& dirs, const TrustPolicy& policy,
                                      std::vector<CatalogProblem>& problems) {
  std::vector<fs::path> files;
  for (const auto& dir : dirs) {
    if (Status st = checkDirectoryTrust(dir, policy); !st) {
      problems.push_back({dir, st.error().message()});
      continue;
    }
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    if (ec) {
      problems.push_back({dir, "cannot read plugin directory: " + ec.message()});
      continue;
    }
    for (; it != end; it.increment(ec)) {
      if (ec) {
        problems.push_back({dir, "cannot read plugin directory: " + ec.message()});
        break;
      }
      if (it->is_directory(ec)) continue;
      if (!looksLikePlugin(it->path())) {
        if (auto why = pythonPluginRefusal(it->path())) problems.push_back({it->path(), *why});
        continue;
      }
      // A link may lead out of the checked directory: check the directories it leads to.
      if (it->is_symlink(ec)) {
        if (Status st = host::checkDirectoriesAbove(it->path(), policy.rules()); !st) {
          problems.push_back({it->path(), st.error().message()});
          continue;
        }
      }
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

Json CatalogConflict::toJson() const {
  Json list = Json::array();
  for (const auto& f : files) list.push_back(f.string());
  return {{"key", key},
          {"files", std::move(list)},
          {"holder", holder.empty() ? Json(nullptr) : Json(holder)},
          {"message", message}};
}

std::vector<CatalogProblem> Catalog::directoryProblems(const std::vector<fs::path>& dirs) const {
  std::vector<CatalogProblem> out;
  for (const auto& p : problems_) {
    if (std::find(dirs.begin(), dirs.end(), p.file) != dirs.end()) out.push_back(p);
  }
  return out;
}

Catalog Catalog::scan(const std::vector<fs::path>& dirs, const TrustPolicy& policy,
                      std::string_view kind) {
  Catalog catalog;
  for (const auto& file : listPluginFiles(dirs, policy, catalog.problems_)) {
    auto entry = readPluginFile(file, policy, kind);
    if (entry) {
      catalog.entries_.push_back(std::move(*entry));
    } else {
      catalog.problems_.push_back({file, entry.error().message()});
    }
  }
  catalog.buildIndex(nullptr);
  return catalog;
}

Catalog Catalog::fromEntries(std::vector<CatalogEntry> entries,
                             std::vector<CatalogProblem> problems, const Catalog* incumbent) {
  Catalog catalog;
  catalog.entries_ = std::move(entries);
  catalog.problems_ = std::move(problems);
  catalog.buildIndex(incumbent);
  return catalog;
}

void Catalog::buildIndex(const Catalog* incumbent) {
  Claims claims = decideClaims(std::move(entries_), incumbent);
  entries_ = std::move(claims.entries);
  problems_.insert(problems_.end(), std::make_move_iterator(claims.problems.begin()),
                   std::make_move_iterator(claims.problems.end()));
  std::stable_sort(
      problems_.begin(), problems_.end(),
      [](const CatalogProblem& a, const CatalogProblem& b) { return a.file < b.file; });
  conflicts_ = std::move(claims.conflicts);
  by_key_ = std::move(claims.routes);
  for (std::size_t i = 0; i < conflicts_.size(); ++i) {
    if (conflicts_[i].holder.empty()) unrouted_.emplace(conflicts_[i].key, i);
  }
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const auto& m = entries_[i].manifest;
    auto& versions = by_name_[toLower(m.name)];
    versions.push_back(i);
    if (versions.size() > 1) continue;  // only the highest version feeds the indexes below
    for (const auto& rpc : m.provides) by_rpc_[rpc].push_back(i);
    if (m.legacy()) legacy_.push_back(i);
  }
}

std::string Catalog::keyFor(std::string_view key) const {
  std::string lowered = toLower(key);
  if (lowered.ends_with(kLegacyKeySuffix) && !by_key_.count(lowered) && !unrouted_.count(lowered)) {
    lowered.resize(lowered.size() - kLegacyKeySuffix.size());
  }
  return lowered;
}

const std::string* Catalog::holderOf(const std::string& lowered_key) const {
  auto it = by_key_.find(lowered_key);
  return it == by_key_.end() ? nullptr : &it->second;
}

const CatalogEntry* Catalog::find(std::string_view key, std::string_view version) const {
  const std::string* plugin = holderOf(keyFor(key));
  if (plugin == nullptr) return nullptr;
  for (std::size_t i : by_name_.at(*plugin)) {
    if (version.empty() || entries_[i].manifest.version.matchesPrefix(version)) return &entries_[i];
  }
  return nullptr;
}

const CatalogConflict* Catalog::conflictFor(std::string_view key) const {
  auto it = unrouted_.find(keyFor(key));
  return it == unrouted_.end() ? nullptr : &conflicts_[it->second];
}

std::vector<const CatalogEntry*> Catalog::providers(std::string_view rpc) const {
  std::vector<const CatalogEntry*> out;
  if (auto it = by_rpc_.find(std::string(rpc)); it != by_rpc_.end()) {
    for (std::size_t i : it->second) out.push_back(&entries_[i]);
  }
  return out;
}

std::vector<const CatalogEntry*> Catalog::legacy() const {
  std::vector<const CatalogEntry*> out;
  for (std::size_t i : legacy_) out.push_back(&entries_[i]);
  for (const auto& e : poll_only_) out.push_back(&e);
  return out;
}

void Catalog::addPollOnly(std::vector<CatalogEntry> entries) {
  for (auto& e : entries) {
    if (by_name_.count(toLower(e.manifest.name))) continue;  // a plugin file has the name
    poll_only_.push_back(std::move(e));
  }
}

}  // namespace plugboard::core
