#include "core/runtime/config.h"

#include <pwd.h>

#include <span>

#include <toml++/toml.h>

#include "core/base/text.h"
#include "core/base/toml_json.h"

namespace plugboard::core {
namespace {

class Reader;

// One key of a table: its name and either the function that reads its value into the
// Config (`key` is the key's full name, e.g. "log.level", for messages) or, for a [table]
// whose keys are fixed, those keys.
using ReadFn = Status (*)(const Reader& r, const toml::node& value, const std::string& key,
                          Config& c);
struct ConfigKey {
  std::string_view name;
  ReadFn read = nullptr;
  std::span<const ConfigKey> sub = {};
};

// "a, b or c"
std::string either(std::span<const std::string_view> choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i) {
    if (i > 0) out += i + 1 == choices.size() ? " or " : ", ";
    out += choices[i];
  }
  return out;
}

class Reader {
 public:
  explicit Reader(std::filesystem::path file) : file_(std::move(file)) {}

  Error error(const toml::source_region& where, const std::string& key,
              const std::string& what) const {
    return Error(file_.string() + ":" + std::to_string(where.begin.line) + ":" +
                 std::to_string(where.begin.column) + ": '" + key + "' " + what);
  }

  std::filesystem::path resolve(const std::string& p) const {
    std::filesystem::path path(p);
    return path.is_absolute() ? path : file_.parent_path() / path;
  }

  // Reads each key of `table` with its entry of `keys`; a key without one is an error
  // that lists them. `prefix` is the table's own name ("" for the file).
  Status table(const toml::table& table, const std::string& prefix, std::span<const ConfigKey> keys,
               Config& c) const {
    for (auto&& [k, node] : table) {
      const std::string name(k.str());
      const std::string key = prefix.empty() ? name : prefix + "." + name;
      const ConfigKey* known = nullptr;
      for (const ConfigKey& candidate : keys) {
        if (candidate.name == name) known = &candidate;
      }
      if (known == nullptr) {
        std::vector<std::string> names;
        for (const ConfigKey& candidate : keys) names.emplace_back(candidate.name);
        return error(k.source(), key, "is not a configuration key (expected " + join(names) + ")");
      }
      Status st = Status::Ok();
      if (known->read != nullptr) {
        st = known->read(*this, node, key, c);
      } else if (const auto* sub = node.as_table()) {
        st = this->table(*sub, key, known->sub, c);
      } else {
        st = error(node.source(), key, "must be a table");
      }
      if (!st) return st;
    }
    return Status::Ok();
  }

  Status string(const toml::node& node, const std::string& key, std::string& out) const {
    const auto* s = node.as_string();
    if (s == nullptr) return error(node.source(), key, "must be a string");
    out = s->get();
    return Status::Ok();
  }
  Status oneOf(const toml::node& node, const std::string& key,
               std::span<const std::string_view> choices, std::string& out) const {
    std::string s;
    if (Status st = string(node, key, s); !st) return st;
    for (const auto choice : choices) {
      if (s == choice) {
        out = s;
        return Status::Ok();
      }
    }
    return error(node.source(), key, "must be " + either(choices));
  }
  Status boolean(const toml::node& node, const std::string& key, bool& out) const {
    const auto* b = node.as_boolean();
    if (b == nullptr) return error(node.source(), key, "must be true or false");
    out = b->get();
    return Status::Ok();
  }
  Status integer(const toml::node& node, const std::string& key, long long& out, long long min,
                 long long max) const {
    const auto* i = node.as_integer();
    if (i == nullptr || i->get() < min || i->get() > max) {
      return error(node.source(), key,
                   "must be an integer from " + std::to_string(min) + " to " + std::to_string(max));
    }
    out = i->get();
    return Status::Ok();
  }
  Status duration(const toml::node& node, const std::string& key, Millis& out) const {
    if (const auto* i = node.as_integer(); i != nullptr && i->get() >= 0) {
      auto d = durationFromSeconds(i->get());
      if (!d) return error(node.source(), key, d.error().message());
      out = *d;
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
      if (Status st = add(s->get(), item); !st) return st;
    }
    return Status::Ok();
  }
  // Each entry of a table whose keys the user names (plugin or deployer names).
  template <class F>
  Status eachEntry(const toml::node& node, const std::string& key, const std::string& shape,
                   F each) const {
    const auto* t = node.as_table();
    if (t == nullptr) return error(node.source(), key, "must be a table of " + shape);
    for (auto&& [name, value] : *t) {
      if (Status st = each(std::string(name.str()), key + "." + std::string(name.str()), value);
          !st)
        return st;
    }
    return Status::Ok();
  }

 private:
  std::filesystem::path file_;
};

// The member a key fills: of Config, or of the server's options it holds.
template <auto Member>
auto& member(Config& c) {
  if constexpr (requires { c.*Member; }) {
    return c.*Member;
  } else {
    return c.server.*Member;
  }
}

// Readers of one value into one member, for the table below.
template <auto Member>
Status readString(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  return r.string(v, key, member<Member>(c));
}
template <auto Member>
Status readBool(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  return r.boolean(v, key, member<Member>(c));
}
template <auto Member>
Status readDuration(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  return r.duration(v, key, member<Member>(c));
}
template <auto Member, long long kMin, long long kMax>
Status readInteger(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  long long n = 0;
  Status st = r.integer(v, key, n, kMin, kMax);
  if (st) member<Member>(c) = static_cast<std::remove_reference_t<decltype(member<Member>(c))>>(n);
  return st;
}
// A path, relative to the file's directory; "" leaves it unset.
template <auto Member>
Status readPath(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  std::string s;
  Status st = r.string(v, key, s);
  if (st && !s.empty()) member<Member>(c) = r.resolve(s);
  return st;
}
template <auto Member>
Status readPaths(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  return r.stringList(v, key, [&](const std::string& s, const toml::node&) {
    member<Member>(c).push_back(r.resolve(s));
    return Status::Ok();
  });
}
template <auto Member, const auto& kChoices>
Status readChoice(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  return r.oneOf(v, key, kChoices, member<Member>(c));
}
Status readOwners(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  return r.stringList(v, key, [&](const std::string& name, const toml::node& item) -> Status {
    const passwd* pw = ::getpwnam(name.c_str());
    if (pw == nullptr)
      return r.error(item.source(), key, "names no user on this machine: '" + name + "'");
    c.trust.extra_owners.push_back(pw->pw_uid);
    return Status::Ok();
  });
}

Status readPins(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  return r.eachEntry(
      v, key, "name = \"sha256 hex\"",
      [&](const std::string& name, const std::string& pin_key, const toml::node& digest) -> Status {
        const auto* d = digest.as_string();
        if (d == nullptr || d->get().size() != 64 ||
            d->get().find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) {
          return r.error(digest.source(), pin_key, "must be a SHA-256 digest: 64 hex digits");
        }
        c.trust.pins[toLower(name)] = toLower(d->get());
        return Status::Ok();
      });
}

Status readPriority(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  return r.eachEntry(
      v, key, "plugin name = integer",
      [&](const std::string& name, const std::string& sub, const toml::node& value) -> Status {
        long long p = 0;
        Status st = r.integer(value, sub, p, -1000000, 1000000);
        if (st) c.priority[name] = static_cast<int>(p);
        return st;
      });
}

Status readDeployerOptions(const Reader& r, const toml::node& v, const std::string& key,
                           Config& c) {
  return r.eachEntry(
      v, key, "[deployers.NAME] tables",
      [&](const std::string& name, const std::string& sub, const toml::node& options) -> Status {
        if (!options.is_table())
          return r.error(options.source(), sub, "must be a table of options");
        c.deployer_options[name] = tomlToJson(options);
        return Status::Ok();
      });
}

Status readDeploy(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  return r.eachEntry(
      v, key, "plugin name = \"deployer\" or { deployer = ..., options }",
      [&](const std::string& name, const std::string& sub, const toml::node& value) -> Status {
        Placement d;
        if (const auto* s = value.as_string()) {
          d.deployer = s->get();
        } else if (value.is_table()) {
          d.options = tomlToJson(value);
          if (auto it = d.options.find("deployer"); it != d.options.end() && it->is_string()) {
            d.deployer = it->get<std::string>();
            d.options.erase("deployer");
          }
        }
        if (d.deployer.empty()) {
          return r.error(value.source(), sub,
                         "must be a deployer name or a table with deployer = \"NAME\"");
        }
        c.plugin_deploy[toLower(name)] = std::move(d);
        return Status::Ok();
      });
}

// A Pod Security Standard's name into `level`.
template <host::PodSecurity ContainmentPolicy::*Level>
Status readPodSecurity(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  constexpr std::string_view kLevels[] = {"restricted", "baseline", "privileged"};
  std::string name;
  if (Status st = r.oneOf(v, key, kLevels, name); !st) return st;
  c.containment.*Level = *host::parsePodSecurity(name);
  return Status::Ok();
}

constexpr ConfigKey kContainmentKeys[] = {
    {"templates", readPodSecurity<&ContainmentPolicy::templates>},
    {"executor_plugins", readPodSecurity<&ContainmentPolicy::plugins>},
    {"user_namespaces", [](const Reader& r, const toml::node& v, const std::string& key,
                           Config& c) { return r.boolean(v, key, c.containment.user_namespaces); }},
};

// [plugin_limits.NAME]: calls and queue, each optional; the other keeps its default.
Status readPluginLimits(const Reader& r, const toml::node& v, const std::string& key, Config& c) {
  return r.eachEntry(
      v, key, "[plugin_limits.NAME] tables of calls and queue",
      [&](const std::string& name, const std::string& sub, const toml::node& value) -> Status {
        const auto* t = value.as_table();
        if (t == nullptr) return r.error(value.source(), sub, "must be a table of calls and queue");
        BulkheadLimits limits{-1, -1};  // unset: plugin_calls', plugin_queue's
        for (auto&& [k, n] : *t) {
          const std::string field(k.str());
          const std::string field_key = sub + "." + field;
          long long x = 0;
          Status st = Status::Ok();
          if (field == "calls") {
            st = r.integer(n, field_key, x, 1, 4096);
            limits.calls = static_cast<int>(x);
          } else if (field == "queue") {
            st = r.integer(n, field_key, x, 0, 1'000'000);
            limits.queue = static_cast<int>(x);
          } else {
            st = r.error(k.source(), field_key,
                         "is not a key of a plugin's limits (expected calls or queue)");
          }
          if (!st) return st;
        }
        c.server.plugin_limits_by_name[toLower(name)] = limits;
        return Status::Ok();
      });
}

constexpr std::string_view kLogLevels[] = {"trace", "debug", "info", "warn", "error", "off"};
constexpr std::string_view kLogFormats[] = {"text", "json"};

constexpr ConfigKey kLogKeys[] = {
    {"level", readChoice<&Config::log_level, kLogLevels>},
    {"format", readChoice<&Config::log_format, kLogFormats>},
};

constexpr ConfigKey kTrustKeys[] = {
    {"strict", [](const Reader& r, const toml::node& v, const std::string& key,
                  Config& c) { return r.boolean(v, key, c.trust.strict); }},
    {"owners", readOwners},
    {"pins", readPins},
};

// Every key of the file, in the order the unknown-key message lists them.
constexpr ConfigKey kKeys[] = {
    {"plugin_dirs", readPaths<&Config::plugin_dirs>},
    {"watch", readBool<&Config::watch>},
    {"listen", readString<&ServerOptions::listen>},
    {"token_file", readPath<&Config::token_file>},
    {"workers", readInteger<&ServerOptions::threads, 0, 1024>},
    {"call_threads", readInteger<&ServerOptions::call_threads, 1, 4096>},
    {"plugin_calls",
     [](const Reader& r, const toml::node& v, const std::string& key, Config& c) {
       long long n = 0;
       Status st = r.integer(v, key, n, 1, 4096);
       if (st) c.server.plugin_limits.calls = static_cast<int>(n);
       return st;
     }},
    {"plugin_queue",
     [](const Reader& r, const toml::node& v, const std::string& key, Config& c) {
       long long n = 0;
       Status st = r.integer(v, key, n, 0, 1'000'000);
       if (st) c.server.plugin_limits.queue = static_cast<int>(n);
       return st;
     }},
    {"plugin_limits", readPluginLimits},
    {"default_timeout", readDuration<&ServerOptions::default_timeout>},
    {"poll_interval", readDuration<&ServerOptions::poll_interval>},
    {"reply_deadline", readDuration<&ServerOptions::reply_deadline>},
    {"grace_period", readDuration<&ServerOptions::grace_period>},
    {"body_limit", readInteger<&ServerOptions::body_limit, 1, 1 << 30>},
    {"args_limit", readInteger<&Config::args_limit, 1, 1 << 30>},
    {"max_nodes", readInteger<&Config::max_nodes, 1, 1'000'000'000>},
    {"poll_unknown", readBool<&ServerOptions::poll_unknown>},
    {"max_connections", readInteger<&ServerOptions::max_connections, 0, 10'000'000>},
    {"log", nullptr, kLogKeys},
    {"trust", nullptr, kTrustKeys},
    {"priority", readPriority},
    {"deployer_dirs", readPaths<&Config::deployer_dirs>},
    {"deployers", readDeployerOptions},
    {"registry", readPath<&Config::registry>},
    {"deploy", readDeploy},
    {"containment", nullptr, kContainmentKeys},
    {"reload_debounce", readDuration<&Config::reload_debounce>},
};

}  // namespace

std::vector<std::string> configKeys() {
  std::vector<std::string> out;
  for (const ConfigKey& k : kKeys) {
    if (k.sub.empty()) out.emplace_back(k.name);
    for (const ConfigKey& s : k.sub) out.push_back(std::string(k.name) + "." + std::string(s.name));
  }
  return out;
}

Expected<Config> parseConfig(std::string_view text, const std::filesystem::path& file) {
  toml::table root;
  try {
    root = toml::parse(text, file.string());
  } catch (const toml::parse_error& e) {
    return Error(file.string() + ":" + std::to_string(e.source().begin.line) + ":" +
                 std::to_string(e.source().begin.column) +
                 ": TOML syntax error: " + std::string(e.description()));
  }
  Config config;
  if (Status st = Reader(file).table(root, "", kKeys, config); !st) return st.error();
  return config;
}

Expected<Config> loadConfig(const std::filesystem::path& file) {
  // Checked with the default rules, before it is read: the file's own [trust] cannot vouch
  // for it, or a configuration anyone may write could switch the checks off.
  auto text = readTrustedFile(file, TrustPolicy{}, "configuration file");
  if (!text) return text.error();
  return parseConfig(*text, file);
}

}  // namespace plugboard::core
