// deployers/common/image_store.cc: see image_store.h.
#include "deployers/common/image_store.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <vector>

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

namespace plugboard::deployer_common {
namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

std::string homeDir() {
  if (std::string home = env("HOME"); !home.empty() && home[0] == '/') return home;
  if (const passwd* pw = ::getpwuid(::geteuid()); pw != nullptr && pw->pw_dir != nullptr)
    return pw->pw_dir;
  return {};
}

bool isFile(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// $HOME, $UID and $USER in a rootless path, as containers-storage expands them.
std::string expandRootless(std::string path) {
  const std::pair<std::string, std::string> vars[] = {
      {"$HOME", homeDir()}, {"$UID", std::to_string(::geteuid())}, {"$USER", env("USER")}};
  for (const auto& [name, value] : vars) {
    for (std::size_t at; (at = path.find(name)) != std::string::npos;)
      path.replace(at, name.size(), value);
  }
  return path;
}

// Where the store's image list is: <graphroot>/<driver>-images/images.json. Sets `why`
// when the files cannot say.
std::optional<fs::path> imageList(std::string& why) {
  const bool root = ::geteuid() == 0;
  fs::path conf;
  bool own_conf = false;  // a rootless user's own storage.conf: its graphroot is theirs
  if (std::string given = env("CONTAINERS_STORAGE_CONF"); !given.empty()) {
    conf = given;
    own_conf = true;
  } else {
    if (!root) {
      std::string config_home = env("XDG_CONFIG_HOME");
      if (config_home.empty() && !homeDir().empty()) config_home = homeDir() + "/.config";
      if (!config_home.empty() && isFile(fs::path(config_home) / "containers/storage.conf")) {
        conf = fs::path(config_home) / "containers/storage.conf";
        own_conf = true;
      }
    }
    if (conf.empty()) {
      conf = isFile("/etc/containers/storage.conf") ? "/etc/containers/storage.conf"
                                                    : "/usr/share/containers/storage.conf";
    }
  }
  std::string driver = env("STORAGE_DRIVER"), graphroot, rootless_path;
  if (isFile(conf)) {
    toml::table table;
    try {
      table = toml::parse_file(conf.string());
    } catch (const toml::parse_error& e) {
      why = conf.string() + " cannot be read: " + std::string(e.description());
      return std::nullopt;
    }
    const auto storage = table["storage"];
    if (driver.empty()) driver = storage["driver"].value_or(std::string());
    graphroot = storage["graphroot"].value_or(std::string());
    rootless_path = storage["rootless_storage_path"].value_or(std::string());
    if (storage["imagestore"] || storage["options"]["imagestore"]) {
      why = conf.string() + " keeps images in a separate image store";
      return std::nullopt;
    }
    if (const auto* stores = storage["options"]["additionalimagestores"].as_array();
        stores != nullptr && !stores->empty()) {
      why = conf.string() + " names additional image stores";
      return std::nullopt;
    }
  }
  fs::path dir;
  if (root || own_conf) {
    dir = graphroot.empty() ? (root ? std::string("/var/lib/containers/storage") : std::string())
                            : (root ? graphroot : expandRootless(graphroot));
  }
  if (dir.empty() && !root) {
    if (!rootless_path.empty()) {
      dir = expandRootless(rootless_path);
    } else {
      std::string data_home = env("XDG_DATA_HOME");
      if (data_home.empty() && !homeDir().empty()) data_home = homeDir() + "/.local/share";
      if (!data_home.empty()) dir = fs::path(data_home) / "containers/storage";
    }
  }
  if (dir.empty()) {
    why = "no home directory to find the user's image store in";
    return std::nullopt;
  }
  if (!driver.empty()) {
    fs::path list = dir / (driver + "-images") / "images.json";
    if (isFile(list)) return list;
    why = list.string() + " does not exist";
    return std::nullopt;
  }
  // No driver configured: podman keeps using the one the store was made with.
  std::vector<fs::path> found;
  for (const char* d : {"overlay", "vfs", "btrfs", "zfs", "aufs", "devmapper"}) {
    fs::path list = dir / (std::string(d) + "-images") / "images.json";
    if (isFile(list)) found.push_back(list);
  }
  if (found.size() == 1) return found.front();
  why = found.empty() ? "no image list in " + dir.string()
                      : "image lists of several drivers in " + dir.string();
  return std::nullopt;
}

// A small reader of the image list (a JSON array of objects), which keeps only each
// image's "id" and "names" and skips every other value without decoding it. It reads
// JSON as any parser does (strings with their escapes, nesting); false on anything else.
class ListReader {
 public:
  explicit ListReader(std::string_view text) : s_(text) {}

  // The id of the image whose names hold `name`; "" when none does. False: not JSON as
  // expected.
  bool find(std::string_view name, std::string& id) {
    id.clear();
    space();
    if (!take('[')) return false;
    space();
    if (take(']')) return true;
    for (;;) {
      std::string_view image_id;
      bool named = false;
      if (!image(name, image_id, named)) return false;
      if (named) {
        id = std::string(image_id);
        return true;
      }
      space();
      if (take(']')) return true;
      if (!take(',')) return false;
      space();
    }
  }

 private:
  bool image(std::string_view name, std::string_view& id, bool& named) {
    if (!take('{')) return false;
    space();
    if (take('}')) return true;
    for (;;) {
      std::string_view key;
      if (!string(key)) return false;
      space();
      if (!take(':')) return false;
      space();
      if (key == "id") {
        if (!string(id)) return false;
      } else if (key == "names") {
        if (!take('[')) return false;
        space();
        if (!take(']')) {
          for (;;) {
            std::string_view n;
            if (!string(n)) return false;
            if (n == name) named = true;
            space();
            if (take(']')) break;
            if (!take(',')) return false;
            space();
          }
        }
      } else if (!skip(0)) {
        return false;
      }
      space();
      if (take('}')) return true;
      if (!take(',')) return false;
      space();
    }
  }

  // A string's raw text (escapes left as written: ids and names have none).
  bool string(std::string_view& out) {
    if (!take('"')) return false;
    const std::size_t start = i_;
    for (;;) {
      const void* q = std::memchr(s_.data() + i_, '"', s_.size() - i_);
      if (q == nullptr) return false;
      const std::size_t at = static_cast<const char*>(q) - s_.data();
      std::size_t slashes = 0;
      while (at - slashes > start && s_[at - slashes - 1] == '\\') ++slashes;
      i_ = at + 1;
      if (slashes % 2 == 0) {
        out = s_.substr(start, at - start);
        return true;
      }
    }
  }

  bool skip(int depth) {
    if (depth > 64 || i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '"') {
      std::string_view ignored;
      return string(ignored);
    }
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++i_;
      space();
      if (take(close)) return true;
      for (;;) {
        if (c == '{') {
          std::string_view key;
          if (!string(key)) return false;
          space();
          if (!take(':')) return false;
          space();
        }
        if (!skip(depth + 1)) return false;
        space();
        if (take(close)) return true;
        if (!take(',')) return false;
        space();
      }
    }
    // A number, true, false or null.
    const std::size_t start = i_;
    while (i_ < s_.size() && std::strchr("+-.0123456789eEtruefalsn", s_[i_]) != nullptr) ++i_;
    return i_ > start;
  }

  void space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t'))
      ++i_;
  }
  bool take(char c) {
    if (i_ >= s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

bool readWhole(const fs::path& file, std::string& out) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return true;
}

}  // namespace

std::string storeName(std::string_view image) {
  if (image.empty() || image.find("://") != std::string_view::npos || image.find('@') != image.npos)
    return {};
  for (char c : image) {
    if (std::isupper(static_cast<unsigned char>(c)) || std::isspace(static_cast<unsigned char>(c)))
      return {};
  }
  const auto slash = image.find('/');
  if (slash == std::string_view::npos) return {};  // a short name: registries.conf decides
  std::string domain(image.substr(0, slash));
  std::string path(image.substr(slash + 1));
  // A first component is a registry when it has a '.' or a ':' or is localhost
  // (github.com/distribution/reference's splitDockerDomain); else a short name.
  if (domain != "localhost" && domain.find_first_of(".:") == std::string::npos) return {};
  // A port after the host, or a transport such as oci-archive:/file (podman's to read).
  if (const auto colon = domain.find(':'); colon != std::string::npos &&
      (colon + 1 == domain.size() || domain.find_first_not_of("0123456789", colon + 1) !=
                                         std::string::npos))
    return {};
  if (domain == "index.docker.io") domain = "docker.io";
  if (domain == "docker.io" && path.find('/') == std::string::npos) path = "library/" + path;
  const auto last = path.rfind('/');
  const std::string_view tail = std::string_view(path).substr(last == path.npos ? 0 : last + 1);
  if (tail.find(':') == std::string_view::npos) path += ":latest";
  if (path.empty() || path.front() == ':' || path.back() == ':') return {};
  return domain + "/" + path;
}

StoredContainers storedContainerNames() {
  StoredContainers r;
  if (!env("CONTAINER_HOST").empty() || !env("CONTAINER_CONNECTION").empty()) return r;
  std::string why;
  const auto list = imageList(why);
  if (!list) return r;
  std::string driver = list->parent_path().filename().string();  // "<driver>-images"
  if (!driver.ends_with("-images")) return r;
  driver.resize(driver.size() - 7);
  const fs::path containers =
      list->parent_path().parent_path() / (driver + "-containers") / "containers.json";
  std::string text;
  if (!isFile(containers)) {  // no container was ever made in this store
    r.known = true;
    return r;
  }
  if (!readWhole(containers, text)) return r;
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_array()) return r;
  for (const auto& c : doc) {
    const auto names = c.is_object() ? c.find("names") : c.end();
    if (!c.is_object() || names == c.end() || !names->is_array()) continue;
    for (const auto& n : *names)
      if (n.is_string()) r.names.push_back(n.get<std::string>());
  }
  r.known = true;
  return r;
}

StoredImage findStoredImage(const std::string& image, const std::string& podman_option) {
  StoredImage r;
  if (podman_option != "podman") {
    r.why = "option 'podman' names another podman";
    return r;
  }
  if (!env("CONTAINER_HOST").empty() || !env("CONTAINER_CONNECTION").empty()) {
    r.why = "podman is remote ($CONTAINER_HOST or $CONTAINER_CONNECTION)";
    return r;
  }
  const std::string name = storeName(image);
  if (name.empty()) {
    r.why = "'" + image + "' is not a full name with a registry and a tag";
    return r;
  }
  const auto list = imageList(r.why);
  if (!list) return r;
  std::string text;
  if (!readWhole(*list, text)) {
    r.why = list->string() + " cannot be read: " + std::strerror(errno);
    return r;
  }
  ListReader reader(text);
  std::string id;
  if (!reader.find(name, id)) {
    r.why = list->string() + " is not an image list as expected";
    return r;
  }
  if (id.empty()) {
    r.answer = StoredImage::Answer::kAbsent;
    return r;
  }
  if (id.size() != 64 || id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    r.why = list->string() + ": image '" + name + "' has an id that is no image ID";
    return r;
  }
  r.answer = StoredImage::Answer::kFound;
  r.id = std::move(id);
  return r;
}

}  // namespace plugboard::deployer_common
