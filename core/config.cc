#include "core/config.h"

#include <pwd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <toml++/toml.h>

#include "core/text.h"
#include "core/toml_json.h"

namespace plugboard::core {
namespace {

class Reader {
 public:
  explicit Reader(std::filesystem::path file) : file_(std::move(file)) {}

  Error error(const toml::source_region& where, const std::string& key, const std::string& what) const {
    return Error(file_.string() + ":" + std::to_string(where.begin.line) + ":" +
                 std::to_string(where.begin.column) + ": '" + key + "' " + what);
  }

  std::filesystem::path resolve(const std::string& p) const {
    std::filesystem::path path(p);
    return path.is_absolute() ? path : file_.parent_path() / path;
  }

  Status read(const toml::table& root, Config& c) {
    for (auto&& [k, node] : root) {
      const std::string key(k.str());
      Status st = Status::Ok();
      if (key == "plugin_dirs") {
        st = stringList(node, key, [&](const std::string& s) { c.plugin_dirs.push_back(resolve(s)); });
      } else if (key == "watch") {
        st = boolean(node, key, c.watch);
      } else if (key == "listen") {
        st = string(node, key, c.listen);
      } else if (key == "token_file") {
        std::string s;
        st = string(node, key, s);
        if (st && !s.empty()) c.token_file = resolve(s);
      } else if (key == "workers") {
        st = integer(node, key, c.workers, 0, 1024);
      } else if (key == "default_timeout") {
        st = duration(node, key, c.default_timeout);
      } else if (key == "poll_interval") {
        st = duration(node, key, c.poll_interval);
      } else if (key == "grace_period") {
        st = duration(node, key, c.grace_period);
      } else if (key == "body_limit") {
        int limit = 0;
        st = integer(node, key, limit, 1, 1 << 30);
        if (st) c.body_limit = static_cast<std::size_t>(limit);
      } else if (key == "log") {
        st = table(node, key, {"level", "format"}, [&](const std::string& sub, const toml::node& v) {
          std::string s;
          Status r = string(v, "log." + sub, s);
          if (!r) return r;
          if (sub == "level") {
            static const std::vector<std::string> kLevels = {"trace", "debug", "info", "warn", "error", "off"};
            if (std::find(kLevels.begin(), kLevels.end(), s) == kLevels.end()) {
              return Status(error(v.source(), "log.level", "must be trace, debug, info, warn, error or off"));
            }
            c.log_level = s;
          } else {
            if (s != "text" && s != "json") return Status(error(v.source(), "log.format", "must be text or json"));
            c.log_format = s;
          }
          return Status::Ok();
        });
      } else if (key == "trust") {
        st = table(node, key, {"strict", "owners", "pins"}, [&](const std::string& sub, const toml::node& v) {
          if (sub == "strict") return boolean(v, "trust.strict", c.trust.strict);
          if (sub == "owners") {
            Status listed = stringList(v, "trust.owners", [](const std::string&) {});
            if (!listed) return listed;
            for (auto&& item : *v.as_array()) {
              const std::string name = item.as_string()->get();
              const passwd* pw = ::getpwnam(name.c_str());
              if (pw == nullptr) {
                return Status(error(item.source(), "trust.owners",
                                    "names no user on this machine: '" + name + "'"));
              }
              c.trust.extra_owners.push_back(pw->pw_uid);
            }
            return Status::Ok();
          }
          const auto* pins = v.as_table();
          if (pins == nullptr) return Status(error(v.source(), "trust.pins", "must be a table of name = \"sha256 hex\""));
          for (auto&& [name, digest] : *pins) {
            const auto* d = digest.as_string();
            const std::string pin_key = "trust.pins." + std::string(name.str());
            if (d == nullptr || d->get().size() != 64 ||
                d->get().find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
              return Status(error(digest.source(), pin_key, "must be a SHA-256 digest: 64 hex digits"));
            }
            c.trust.pins[toLower(std::string(name.str()))] = toLower(d->get());
          }
          return Status::Ok();
        });
      } else if (key == "deployer_dirs") {
        st = stringList(node, key, [&](const std::string& s) { c.deployer_dirs.push_back(resolve(s)); });
      } else if (key == "registry") {
        std::string s;
        st = string(node, key, s);
        if (st && !s.empty()) c.registry = resolve(s);
      } else if (key == "deployers") {
        const auto* t = node.as_table();
        if (t == nullptr) {
          st = error(node.source(), key, "must be a table of [deployers.NAME] tables");
        } else {
          for (auto&& [name, options] : *t) {
            if (!options.is_table()) {
              st = error(options.source(), "deployers." + std::string(name.str()), "must be a table of options");
              break;
            }
            c.deployer_options[std::string(name.str())] = tomlToJson(options);
          }
        }
      } else if (key == "deploy") {
        const auto* t = node.as_table();
        if (t == nullptr) {
          st = error(node.source(), key, "must be a table of plugin name = \"deployer\" or { deployer = ..., options }");
        } else {
          for (auto&& [name, v] : *t) {
            const std::string sub = "deploy." + std::string(name.str());
            Placement d;
            if (const auto* s = v.as_string()) {
              d.deployer = s->get();
            } else if (v.is_table()) {
              d.options = tomlToJson(v);
              if (auto it = d.options.find("deployer"); it != d.options.end() && it->is_string()) {
                d.deployer = it->get<std::string>();
                d.options.erase("deployer");
              }
            }
            if (d.deployer.empty()) {
              st = error(v.source(), sub, "must be a deployer name or a table with deployer = \"NAME\"");
              break;
            }
            c.plugin_deploy[toLower(std::string(name.str()))] = std::move(d);
          }
        }
      } else if (key == "priority") {
        const auto* t = node.as_table();
        if (t == nullptr) {
          st = error(node.source(), key, "must be a table of plugin name = integer");
        } else {
          for (auto&& [name, v] : *t) {
            int p = 0;
            st = integer(v, "priority." + std::string(name.str()), p, -1000000, 1000000);
            if (!st) break;
            c.priority[std::string(name.str())] = p;
          }
        }
      } else {
        st = error(k.source(), key,
                   "is not a configuration key (expected plugin_dirs, watch, listen, token_file, "
                   "workers, default_timeout, poll_interval, grace_period, body_limit, log, "
                   "trust, priority, deployer_dirs, deployers, registry, deploy)");
      }
      if (!st) return st;
    }
    return Status::Ok();
  }

 private:
  Status string(const toml::node& node, const std::string& key, std::string& out) const {
    const auto* s = node.as_string();
    if (s == nullptr) return error(node.source(), key, "must be a string");
    out = s->get();
    return Status::Ok();
  }
  Status boolean(const toml::node& node, const std::string& key, bool& out) const {
    const auto* b = node.as_boolean();
    if (b == nullptr) return error(node.source(), key, "must be true or false");
    out = b->get();
    return Status::Ok();
  }
  Status integer(const toml::node& node, const std::string& key, int& out, long long min, long long max) const {
    const auto* i = node.as_integer();
    if (i == nullptr || i->get() < min || i->get() > max) {
      return error(node.source(), key,
                   "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    }
    out = static_cast<int>(i->get());
    return Status::Ok();
  }
  Status duration(const toml::node& node, const std::string& key, Millis& out) const {
    if (const auto* i = node.as_integer(); i != nullptr && i->get() >= 0) {
      out = Millis(i->get() * 1000);
      return Status::Ok();
    }
    const auto* s = node.as_string();
    if (s == nullptr) return error(node.source(), key, "must be a duration such as \"30s\"");
    auto d = parseDuration(s->get());
    if (!d) return error(node.source(), key, d.error().message());
    out = *d;
    return Status::Ok();
  }
  template <class F>
  Status stringList(const toml::node& node, const std::string& key, F add) const {
    const auto* a = node.as_array();
    if (a == nullptr) return error(node.source(), key, "must be an array of strings");
    for (auto&& item : *a) {
      const auto* s = item.as_string();
      if (s == nullptr) return error(item.source(), key, "must hold only strings");
      add(s->get());
    }
    return Status::Ok();
  }
  template <class F>
  Status table(const toml::node& node, const std::string& key, const std::vector<std::string>& allowed, F each) const {
    const auto* t = node.as_table();
    if (t == nullptr) return error(node.source(), key, "must be a table");
    for (auto&& [k, v] : *t) {
      const std::string sub(k.str());
      if (std::find(allowed.begin(), allowed.end(), sub) == allowed.end()) {
        return error(k.source(), key + "." + sub,
                     "is not a configuration key (expected " + join(allowed) + ")");
      }
      if (Status st = each(sub, v); !st) return st;
    }
    return Status::Ok();
  }

  std::filesystem::path file_;
};

}  // namespace

Expected<Config> parseConfig(std::string_view text, const std::filesystem::path& file) {
  toml::table root;
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    return Error(file.string() + ":" + std::to_string(e.source().begin.line) + ":" +
                 std::to_string(e.source().begin.column) + ": TOML syntax error: " +
                 std::string(e.description()));
  }
  Config config;
  Reader reader(file);
  if (Status st = reader.read(root, config); !st) return st.error();
  return config;
}

Expected<Config> loadConfig(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error(file.string() + ": cannot read the configuration file", Error::Code::kIo);
  std::stringstream buf;
  buf << in.rdbuf();
  return parseConfig(buf.str(), file);
}

}  // namespace plugboard::core
