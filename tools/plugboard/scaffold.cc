#include "tools/plugboard/scaffold.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <system_error>

#include "core/runtime/exports.h"
#include "plugboard/host/spawn.h"

namespace plugboard::cli {
namespace fs = std::filesystem;

namespace {

bool isDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// `text` with every @KEY@ of `values` replaced by its value.
std::string render(std::string_view text, const std::map<std::string, std::string>& values) {
  std::string out(text);
  for (const auto& [key, value] : values) {
    const std::string placeholder = "@" + key + "@";
    for (auto at = out.find(placeholder); at != std::string::npos;
         at = out.find(placeholder, at + value.size())) {
      out.replace(at, placeholder.size(), value);
    }
  }
  return out;
}

// Whether python3 already finds a module of that name (the standard library's, or one
// installed): a plugin module of the same name would hide it from the plugin's own test
// and from the SDK. False when there is no python3 to ask.
bool pythonHasModule(const std::string& module) {
  const auto python = host::findExecutable("python3");
  if (!python) return false;
  const std::string probe =
      "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec(sys.argv[1]) else 1)";
  return host::runToEnd({*python, "-I", "-c", probe, module}, std::chrono::seconds(10)) == 0;
}

// `text` as a double-quoted string of `escaped` characters, each preceded by a backslash.
std::string quoted(const std::string& text, std::string_view escaped) {
  std::string out = "\"";
  for (char c : text) {
    if (escaped.find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out + "\"";
}

// `word` as sh reads it: as it is when nothing in it is special, else single-quoted.
std::string shellWord(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           std::string_view("/._-+,:=@%").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Origin thisOrigin() {
  Origin origin;
  std::error_code ec;
  origin.plugboard = fs::read_symlink("/proc/self/exe", ec);
  const fs::path bin = origin.plugboard.parent_path();
  // A build tree's package is beside its binary; an installation's under its prefix.
  for (const fs::path& dir : {bin / "cmake" / "plugboard",
                              bin.parent_path() / CMAKE_INSTALL_LIBDIR_NAME / "cmake" / "plugboard",
                              bin.parent_path() / "lib" / "cmake" / "plugboard"}) {
    if (fs::is_regular_file(dir / "plugboardConfig.cmake", ec)) {
      origin.package = dir;
      break;
    }
  }
  const auto on_path = host::findExecutable("plugboard");
  origin.command = on_path && fs::equivalent(*on_path, origin.plugboard, ec)
                       ? "plugboard"
                       : shellWord(origin.plugboard.string());
  return origin;
}

std::string className(std::string_view name, std::string_view suffix) {
  std::string out;
  bool start = true;
  for (char c : name) {
    if (c == '.' || c == '_' || c == '-') {
      start = true;
      continue;
    }
    out += start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    start = false;
  }
  if (out.empty() || isDigit(out[0])) out.insert(0, "P");
  return out + std::string(suffix);
}

std::string moduleName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == '.' || c == '-') c = '_';
  }
  if (out.empty() || isDigit(out[0])) out.insert(0, "p_");
  return out;
}

std::string pythonModuleName(std::string_view name) {
  std::string module = moduleName(name);
  if (pythonHasModule(module)) module += "_plugin";
  return module;
}

core::Expected<std::vector<ProjectFile>> projectFiles(std::string_view kind, std::string_view name,
                                                      const Origin& origin) {
  // Checked as the runtime checks the name in a manifest, and refused in its words.
  const core::Json manifest = {
      {"kind", "executor"}, {"name", name}, {"version", "0.1.0"}, {"abi", 1}};
  const std::string text = manifest.dump(-1, ' ', false, core::Json::error_handler_t::replace);
  if (auto parsed = core::parseManifest(text); !parsed) return parsed.error();
  const std::map<std::string, std::string> values = {
      {"NAME", std::string(name)},
      {"CLASS", className(name, kind == "deployer" ? "Deployer" : "Plugin")},
      {"MODULE", kind == "plugin-python" ? pythonModuleName(name) : moduleName(name)},
      {"PLUGBOARD", origin.command},
      {"PLUGBOARD_CMAKE", quoted(origin.plugboard.string(), "\\\"$")},
      {"PLUGBOARD_PY", quoted(origin.plugboard.string(), "\\\"")},
      {"PACKAGE_CMAKE", quoted(origin.package.string(), "\\\"$")},
      {"PACKAGE_DIR", origin.package.string()}};
  std::vector<ProjectFile> files;
  for (const TemplateFile& file : templateFiles()) {
    if (file.kind == kind) files.push_back({render(file.path, values), render(file.text, values)});
  }
  if (files.empty()) return core::Error("there is no template '" + std::string(kind) + "'");
  std::sort(files.begin(), files.end(),
            [](const ProjectFile& a, const ProjectFile& b) { return a.path < b.path; });
  return files;
}

core::Status writeProject(const fs::path& dir, const std::vector<ProjectFile>& files) {
  std::vector<std::string> existing;
  std::error_code ec;
  for (const ProjectFile& file : files) {
    const fs::path path = dir / file.path;
    if (fs::exists(fs::symlink_status(path, ec))) existing.push_back(path.string());
  }
  if (!existing.empty()) {
    return core::Error(core::join(existing, ", ") + (existing.size() == 1 ? " exists" : " exist") +
                       " already; nothing was written (choose another --dir, or move " +
                       (existing.size() == 1 ? "it" : "them") + " away)");
  }
  for (const ProjectFile& file : files) {
    const fs::path path = dir / file.path;
    fs::create_directories(path.parent_path(), ec);
    if (ec) {
      return core::Error(path.parent_path().string() + ": cannot create: " + ec.message(),
                         core::Error::Code::kIo);
    }
    // "x": never replaces a file that appeared since the check above.
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(path.c_str(), "wbx"),
                                                        &std::fclose);
    if (!out || std::fwrite(file.text.data(), 1, file.text.size(), out.get()) != file.text.size() ||
        std::fclose(out.release()) != 0) {
      return core::Error(path.string() + ": cannot write: " +
                             std::error_code(errno, std::generic_category()).message(),
                         core::Error::Code::kIo);
    }
  }
  return core::Status::Ok();
}

}  // namespace plugboard::cli
