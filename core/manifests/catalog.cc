#include "core/manifests/catalog.h"

#include "core/manifests/file_handle.h"

#include <algorithm>
#include <map>
#include <system_error>

#include "core/manifests/elf_section.h"
#include "plugboard/abi.h"

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kLegacySuffix = "-executor-plugin";

bool looksLikePlugin(const fs::path& p) {
  const std::string name = p.filename().string();
  if (name.empty() || name[0] == '.') return false;
  return name.ends_with(".so") || name.find(".so.") != std::string::npos;
}

}  // namespace

Expected<CatalogEntry> readPluginFile(const fs::path& file, const TrustPolicy& policy,
                                      std::string_view kind) {
  auto opened = FileHandle::open(file);
  if (!opened) return opened.error();
  const FileHandle& handle = *opened;
  if (Status st = checkFileTrust(handle.fd(), file, policy); !st) return st.error();
  auto section = readElfSection(handle.fd(), PLUGBOARD_MANIFEST_SECTION);
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
  if (Status st = checkPin(handle.fd(), manifest->name, manifest->version.text(), file, policy);
      !st) {
    return st.error();
  }
  std::string label = manifest->name + "@" + manifest->version.text();
  return CatalogEntry{std::move(*manifest), file, std::move(label), {}, {}};
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
      if (it->is_directory(ec) || !looksLikePlugin(it->path())) continue;
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
  catalog.buildIndex();
  return catalog;
}

Catalog Catalog::fromEntries(std::vector<CatalogEntry> entries,
                             std::vector<CatalogProblem> problems) {
  Catalog catalog;
  catalog.entries_ = std::move(entries);
  catalog.problems_ = std::move(problems);
  catalog.buildIndex();
  return catalog;
}

void Catalog::buildIndex() {
  // Refuse every (name, version) claimed by more than one file.
  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> claims;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const auto& m = entries_[i].manifest;
    claims[{toLower(m.name), m.version.text()}].push_back(i);
  }
  std::vector<bool> refused(entries_.size(), false);
  for (const auto& [key, idx] : claims) {
    if (idx.size() < 2) continue;
    for (std::size_t i : idx) {
      std::vector<std::string> other_files;
      for (std::size_t j : idx) {
        if (j != i) other_files.push_back(entries_[j].file.string());
      }
      const std::string others = join(other_files);
      refused[i] = true;
      problems_.push_back({entries_[i].file, "plugin '" + entries_[i].manifest.name + "' " +
                                                 key.second + " is also provided by " + others +
                                                 "; neither file is used: remove one"});
    }
  }
  std::vector<CatalogEntry> kept;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!refused[i]) kept.push_back(std::move(entries_[i]));
  }
  entries_ = std::move(kept);
  std::sort(entries_.begin(), entries_.end(), [](const CatalogEntry& a, const CatalogEntry& b) {
    const std::string la = toLower(a.manifest.name), lb = toLower(b.manifest.name);
    if (la != lb) return la < lb;
    return a.manifest.version > b.manifest.version;
  });
  std::sort(problems_.begin(), problems_.end(),
            [](const CatalogProblem& a, const CatalogProblem& b) { return a.file < b.file; });

  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const auto& m = entries_[i].manifest;
    auto& versions = by_name_[toLower(m.name)];
    versions.push_back(i);
    if (versions.size() > 1) continue;  // only the highest version feeds the indexes below
    for (const auto& alias : m.aliases) by_alias_.emplace(toLower(alias), toLower(m.name));
    // An Argo-style "<x>-executor-plugin" is also known as "<x>".
    if (const std::string lowered = toLower(m.name); lowered.ends_with(kLegacySuffix)) {
      by_alias_.emplace(lowered.substr(0, lowered.size() - kLegacySuffix.size()), lowered);
    }
    for (const auto& rpc : m.provides) by_rpc_[rpc].push_back(i);
    if (m.legacy()) legacy_.push_back(i);
  }
}

const std::vector<std::size_t>* Catalog::versionsOf(const std::string& lowered) const {
  if (auto it = by_name_.find(lowered); it != by_name_.end()) return &it->second;
  if (auto it = by_alias_.find(lowered); it != by_alias_.end()) {
    return &by_name_.at(it->second);
  }
  return nullptr;
}

const CatalogEntry* Catalog::find(std::string_view key, std::string_view version) const {
  std::string lowered = toLower(key);
  const auto* versions = versionsOf(lowered);
  if (versions == nullptr && lowered.ends_with(kLegacySuffix)) {
    lowered.resize(lowered.size() - kLegacySuffix.size());
    versions = versionsOf(lowered);
  }
  if (versions == nullptr) return nullptr;
  for (std::size_t i : *versions) {
    if (version.empty() || entries_[i].manifest.version.matchesPrefix(version)) return &entries_[i];
  }
  return nullptr;
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
  return out;
}

}  // namespace plugboard::core
