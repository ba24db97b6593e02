#include "deployers/python/files.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "deployers/common/launch.h"

namespace plugboard::python_deployer {
namespace {

namespace fs = std::filesystem;
using deployer_common::requireTrusted;

bool present(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// A directory on sys.path: the directory (and those above it) must be trusted.
void checkPathDirectory(const fs::path& dir, const host::TrustRules& rules) {
  if (!present(dir)) return;
  requireTrusted(dir.string(), host::checkDirectory(dir, rules, "module directory"));
  requireTrusted(dir.string(), host::checkDirectoriesAbove(dir, rules));
}

// The bytecode Python would read for module `name` of `dir` (dir/__pycache__/name.*.pyc).
void checkBytecode(const fs::path& dir, const std::string& name, const host::TrustRules& rules) {
  const fs::path cache = dir / "__pycache__";
  std::error_code ec;
  if (!fs::is_directory(cache, ec)) return;
  requireTrusted(cache.string(), host::checkDirectory(cache, rules));
  for (fs::directory_iterator it(cache, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().starts_with(name + ".")) {
      requireTrusted(it->path().string(), host::checkFile(it->path(), rules));
    }
  }
}

// Module `dotted` (its first part) as Python finds it in `dir`: a package directory (all
// of it), or name.py, with its bytecode.
void checkModuleIn(const fs::path& dir, const std::string& dotted, const host::TrustRules& rules) {
  const std::string name = dotted.substr(0, dotted.find('.'));
  const fs::path package = dir / name;
  std::error_code ec;
  if (fs::is_directory(package, ec)) {
    requireTrusted(package.string(), host::checkTree(package, rules, "package directory"));
  } else if (const fs::path file = dir / (name + ".py"); present(file)) {
    requireTrusted(file.string(), host::checkFile(file, rules));
  }
  checkBytecode(dir, name, rules);
}

// A virtual environment: its interpreter, its configuration, and each site-packages
// directory with the .pth files there (a line starting with "import" runs at start-up).
void checkVenv(const fs::path& venv, const host::TrustRules& rules) {
  if (!present(venv)) return;
  requireTrusted(venv.string(), host::checkDirectory(venv, rules, "virtual environment"));
  requireTrusted(venv.string(), host::checkDirectoriesAbove(venv, rules));
  for (const char* file : {"bin/python", "pyvenv.cfg"}) {
    if (present(venv / file))
      requireTrusted((venv / file).string(), host::checkFile(venv / file, rules));
  }
  std::error_code ec;
  for (fs::directory_iterator lib(venv / "lib", ec), end; !ec && lib != end; lib.increment(ec)) {
    const fs::path site = lib->path() / "site-packages";
    if (!lib->path().filename().string().starts_with("python") || !fs::is_directory(site, ec)) {
      continue;
    }
    requireTrusted(site.string(), host::checkDirectory(site, rules, "site-packages directory"));
    std::error_code it_ec;
    for (fs::directory_iterator pth(site, it_ec), stop; !it_ec && pth != stop;
         pth.increment(it_ec)) {
      if (pth->path().extension() == ".pth") {
        requireTrusted(pth->path().string(), host::checkFile(pth->path(), rules));
      }
    }
  }
}

}  // namespace

std::string resolvedPlugin(const std::string& path, const host::TrustRules& rules) {
  const std::string absolute = fs::absolute(path).lexically_normal().string();
  if (path.empty() || !rules.strict) return path.empty() ? path : absolute;
  auto opened = host::openTrusted(absolute, rules);
  if (!opened && opened.error().code() == host::Error::Code::kIo) return absolute;
  if (!opened) requireTrusted(absolute, opened.error());
  return opened->resolved.string();
}

void checkPythonFiles(const PythonFiles& files, const host::TrustRules& rules) {
  if (!rules.strict) return;
  if (!files.python.empty() && present(files.python)) {
    requireTrusted(files.python, host::checkFile(files.python, rules));
  }
  if (!files.venv.empty()) checkVenv(files.venv, rules);
  if (!files.sdk.empty()) {
    checkPathDirectory(files.sdk, rules);
    checkModuleIn(files.sdk, "plugboard_sdk", rules);
  }
  if (!files.file.empty()) {
    const fs::path file = files.file;
    checkPathDirectory(file.parent_path(), rules);
    if (present(file)) requireTrusted(file.string(), host::checkFile(file, rules));
    checkBytecode(file.parent_path(), file.stem().string(), rules);
  } else if (!files.directory.empty()) {
    checkPathDirectory(files.directory, rules);
    checkModuleIn(files.directory, files.module, rules);
  }
}

}  // namespace plugboard::python_deployer
