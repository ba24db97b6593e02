// plugboard/host/containment.h: the grammars and Kubernetes' Pod Security Standards
// (https://kubernetes.io/docs/concepts/security/pod-security-standards/), as the
// runtime and the deployers check them.
#include "plugboard/host/containment.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace plugboard::host {
namespace {

using Json = nlohmann::json;

bool lowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool alnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool word(char c) { return alnum(c) || c == '_'; }

// path-component := [a-z0-9]+ (separator [a-z0-9]+)*, separator := [_.] | __ | [-]+
bool pathComponent(std::string_view s) {
  std::size_t i = 0;
  const auto run = [&] {
    const std::size_t start = i;
    while (i < s.size() && lowerAlnum(s[i])) ++i;
    return i > start;
  };
  if (!run()) return false;
  while (i < s.size()) {
    if (s[i] == '.') {
      ++i;
    } else if (s[i] == '_') {
      i += s.substr(i, 2) == "__" ? 2 : 1;
    } else if (s[i] == '-') {
      while (i < s.size() && s[i] == '-') ++i;
    } else {
      return false;
    }
    if (!run()) return false;
  }
  return true;
}

// domain := host [":" port]; host := a DNS name, an IPv4 address or [IPv6].
bool domain(std::string_view s) {
  if (const auto colon = s.rfind(':');
      colon != std::string_view::npos && (s.front() != '[' || s.rfind(']') < colon)) {
    const std::string_view port = s.substr(colon + 1);
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return false;
    s = s.substr(0, colon);
  }
  if (s.empty()) return false;
  if (s.front() == '[') {
    return s.size() > 2 && s.back() == ']' && std::all_of(s.begin() + 1, s.end() - 1, [](char c) {
             return std::isxdigit(static_cast<unsigned char>(c)) || c == ':';
           });
  }
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = s.find('.', start);
    const std::string_view label =
        s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (label.empty() || !alnum(label.front()) || !alnum(label.back()) ||
        !std::all_of(label.begin(), label.end(), [](char c) { return alnum(c) || c == '-'; }))
      return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// digest := algorithm ":" hex{32,}; algorithm := [A-Za-z][A-Za-z0-9]* ([+._-] same)*
bool digest(std::string_view s) {
  const auto colon = s.find(':');
  if (colon == std::string_view::npos) return false;
  const std::string_view algorithm = s.substr(0, colon), hex = s.substr(colon + 1);
  if (hex.size() < 32 || !std::all_of(hex.begin(), hex.end(), [](char c) {
        return std::isxdigit(static_cast<unsigned char>(c)) != 0;
      }))
    return false;
  bool component_start = true;
  for (char c : algorithm) {
    if (component_start) {
      if (!std::isalpha(static_cast<unsigned char>(c))) return false;
      component_start = false;
    } else if (c == '+' || c == '.' || c == '_' || c == '-') {
      component_start = true;
    } else if (!alnum(c)) {
      return false;
    }
  }
  return !algorithm.empty() && !component_start;
}

// Docker's reference grammar (distribution's reference/regexp.go, as documented there).
bool dockerReference(std::string_view s) {
  if (const auto at = s.find('@'); at != std::string_view::npos) {
    if (!digest(s.substr(at + 1))) return false;
    s = s.substr(0, at);
  }
  const auto slash = s.rfind('/');
  if (const auto colon = s.rfind(':');
      colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
    const std::string_view tag = s.substr(colon + 1);
    if (tag.empty() || tag.size() > 128 || !word(tag.front()) ||
        !std::all_of(tag.begin(), tag.end(),
                     [](char c) { return word(c) || c == '.' || c == '-'; }))
      return false;
    s = s.substr(0, colon);
  }
  if (s.empty() || s.size() > 255) return false;
  std::size_t start = 0;
  if (const auto first = s.find('/'); first != std::string_view::npos) {
    const std::string_view head = s.substr(0, first);
    const bool is_domain = head.find_first_of(".:") != std::string_view::npos ||
                           head == "localhost" || std::any_of(head.begin(), head.end(), [](char c) {
                             return std::isupper(static_cast<unsigned char>(c));
                           });
    if (is_domain) {
      if (!domain(head)) return false;
      start = first + 1;
    }
  }
  for (;;) {
    const std::size_t next = s.find('/', start);
    if (!pathComponent(s.substr(start, next == std::string_view::npos ? s.npos : next - start)))
      return false;
    if (next == std::string_view::npos) return true;
    start = next + 1;
  }
}

bool printablePath(std::string_view p) {
  return !p.empty() && p.front() == '/' && std::none_of(p.begin(), p.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == ' ';
  });
}

std::string shownValue(std::string_view s) {
  std::string out = "'";
  for (char c : s.substr(0, 200)) {
    out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
  }
  return out + (s.size() > 200 ? "...'" : "'");
}

// Kubernetes' baseline set: what a container runtime gives by default, and the most a
// baseline container may add.
const std::set<std::string, std::less<>> kBaselineAdds = {
    "AUDIT_WRITE",      "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};
const std::set<std::string, std::less<>> kDefaultSet = {
    "CHOWN",   "DAC_OVERRIDE", "FOWNER",  "FSETID", "KILL",      "NET_BIND_SERVICE",
    "SETFCAP", "SETGID",       "SETPCAP", "SETUID", "SYS_CHROOT"};

class Reader {
 public:
  Reader(PodSecurity ceiling, std::string_view widen) : ceiling_(ceiling), widen_(widen) {}

  Status refuse(const std::string& field, const std::string& what) const {
    return Error(field + ": " + what + ": refused by the " + podSecurityName(ceiling_) +
                 " Pod Security Standard" +
                 (widen_.empty() ? "" : " (" + std::string(widen_) + ")"));
  }
  Status wrong(const std::string& field, const std::string& what) const {
    return Error(field + " must be " + what);
  }

  // The members both a container's and a pod's securityContext have.
  Status common(const Json& ctx, const std::string& at, ContainerSecurity& s) {
    if (!ctx.is_object()) return wrong(at, "a mapping");
    for (const char* key : {"runAsUser", "runAsGroup"}) {
      const auto it = ctx.find(key);
      if (it == ctx.end() || it->is_null()) continue;
      if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 2147483647)
        return wrong(at + "." + key, "an integer from 0 to 2147483647");
      (std::string_view(key) == "runAsUser" ? s.run_as_user : s.run_as_group) =
          it->get<long long>();
    }
    if (const auto it = ctx.find("runAsNonRoot"); it != ctx.end() && !it->is_null()) {
      if (!it->is_boolean()) return wrong(at + ".runAsNonRoot", "true or false");
      if (!it->get<bool>() && ceiling_ == PodSecurity::kRestricted)
        return refuse(at + ".runAsNonRoot", "false");
      s.run_as_non_root = it->get<bool>();
    }
    if (ceiling_ == PodSecurity::kRestricted && s.run_as_user && *s.run_as_user == 0)
      return refuse(at + ".runAsUser", "0 (root)");
    if (const auto it = ctx.find("seccompProfile"); it != ctx.end() && !it->is_null()) {
      const std::string type = it->is_object() ? it->value("type", std::string()) : "";
      if (type != "RuntimeDefault" && type != "Localhost" && ceiling_ != PodSecurity::kPrivileged)
        return refuse(at + ".seccompProfile.type",
                      shownValue(type) + " (RuntimeDefault or Localhost)");
    }
    if (const auto it = ctx.find("appArmorProfile"); it != ctx.end() && !it->is_null()) {
      const std::string type = it->is_object() ? it->value("type", std::string()) : "";
      if (type == "Unconfined" && ceiling_ != PodSecurity::kPrivileged)
        return refuse(at + ".appArmorProfile.type", "Unconfined");
    }
    if (const auto it = ctx.find("seLinuxOptions"); it != ctx.end() && !it->is_null()) {
      if (!it->is_object()) return wrong(at + ".seLinuxOptions", "a mapping");
      static const std::set<std::string, std::less<>> kTypes = {
          "", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"};
      if (ceiling_ != PodSecurity::kPrivileged &&
          (it->contains("user") || it->contains("role") ||
           !kTypes.contains(it->value("type", std::string()))))
        return refuse(at + ".seLinuxOptions", "a user, a role or a type other than container_t");
    }
    if (const auto it = ctx.find("windowsOptions"); it != ctx.end() && it->is_object()) {
      if (it->value("hostProcess", false) && ceiling_ != PodSecurity::kPrivileged)
        return refuse(at + ".windowsOptions.hostProcess", "true");
    }
    return Status::Ok();
  }

  Status container(const Json& ctx, const std::string& at, ContainerSecurity& s) {
    if (Status st = common(ctx, at, s); !st) return st;
    if (const auto it = ctx.find("privileged"); it != ctx.end() && !it->is_null()) {
      if (!it->is_boolean()) return wrong(at + ".privileged", "true or false");
      if (it->get<bool>() && ceiling_ != PodSecurity::kPrivileged)
        return refuse(at + ".privileged", "true");
      s.privileged = it->get<bool>();
    }
    if (const auto it = ctx.find("allowPrivilegeEscalation"); it != ctx.end() && !it->is_null()) {
      if (!it->is_boolean()) return wrong(at + ".allowPrivilegeEscalation", "true or false");
      if (it->get<bool>() && ceiling_ == PodSecurity::kRestricted)
        return refuse(at + ".allowPrivilegeEscalation", "true");
      s.allow_privilege_escalation = it->get<bool>() && ceiling_ == PodSecurity::kPrivileged;
    }
    if (const auto it = ctx.find("readOnlyRootFilesystem"); it != ctx.end() && !it->is_null()) {
      if (!it->is_boolean()) return wrong(at + ".readOnlyRootFilesystem", "true or false");
      s.read_only_root = it->get<bool>();
    }
    if (const auto it = ctx.find("procMount"); it != ctx.end() && !it->is_null()) {
      if (*it != "Default" && ceiling_ != PodSecurity::kPrivileged)
        return refuse(
            at + ".procMount",
            shownValue(it->is_string() ? it->get<std::string>() : it->dump()) + " (Default)");
    }
    if (const auto it = ctx.find("capabilities"); it != ctx.end() && !it->is_null()) {
      if (!it->is_object()) return wrong(at + ".capabilities", "a mapping");
      for (const char* key : {"add", "drop"}) {
        const auto list = it->find(key);
        if (list == it->end() || list->is_null()) continue;
        const std::string field = at + ".capabilities." + key;
        if (!list->is_array()) return wrong(field, "a list of capability names");
        for (const auto& c : *list) {
          std::string name = c.is_string() ? c.get<std::string>() : "";
          std::transform(name.begin(), name.end(), name.begin(),
                         [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
          if (name.starts_with("CAP_")) name.erase(0, 4);
          if (name.empty() || name.size() > 32 ||
              !std::all_of(name.begin(), name.end(), [](char ch) {
                return std::isupper(static_cast<unsigned char>(ch)) || ch == '_';
              }))
            return wrong(field, "a list of capability names, not " +
                                    shownValue(c.is_string() ? c.get<std::string>() : c.dump()));
          if (std::string_view(key) == "add") {
            const bool allowed =
                ceiling_ == PodSecurity::kPrivileged ||
                (ceiling_ == PodSecurity::kRestricted ? name == "NET_BIND_SERVICE"
                                                      : kBaselineAdds.contains(name));
            if (!allowed) return refuse(field, name);
            s.cap_add.push_back(name);
          } else {
            s.cap_drop.push_back(name);
          }
        }
      }
    }
    return Status::Ok();
  }

  Status pod(const Json& ctx, const std::string& at, ContainerSecurity& s) {
    if (Status st = common(ctx, at, s); !st) return st;
    if (const auto it = ctx.find("sysctls"); it != ctx.end() && !it->is_null()) {
      if (!it->is_array()) return wrong(at + ".sysctls", "a list");
      if (!it->empty() && ceiling_ != PodSecurity::kPrivileged)
        return refuse(at + ".sysctls", "a sysctl");
    }
    return Status::Ok();
  }

 private:
  PodSecurity ceiling_;
  std::string_view widen_;
};

}  // namespace

Status checkImageReference(std::string_view image) {
  const auto bad = [&](const std::string& why) {
    return Error(shownValue(image) + " is not an image reference (" + why + ")");
  };
  if (image.empty()) return bad("it is empty");
  for (const std::string_view transport : {"oci-archive:", "docker-archive:", "oci:", "dir:"}) {
    if (!image.starts_with(transport)) continue;
    if (!printablePath(image.substr(transport.size())))
      return bad(std::string(transport) +
                 " takes an absolute path without spaces or control characters");
    return Status::Ok();
  }
  std::string_view reference = image;
  if (reference.starts_with("docker://"))
    reference.remove_prefix(9);
  else if (reference.starts_with("containers-storage:"))
    reference.remove_prefix(19);
  if (!dockerReference(reference)) {
    return bad(image.front() == '-' ? "it would be read as an option"
                                    : "Docker's grammar: [domain[:port]/]path[:tag][@digest], "
                                      "lower-case path components");
  }
  return Status::Ok();
}

Status checkEnvName(std::string_view name) {
  const auto ok = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  };
  if (name.empty() || !ok(name.front()) || !std::all_of(name.begin(), name.end(), [&](char c) {
        return ok(c) || std::isdigit(static_cast<unsigned char>(c));
      }))
    return Error(shownValue(name) +
                 " is not an environment variable's name ([-._a-zA-Z][-._a-zA-Z0-9]*)");
  return Status::Ok();
}

std::optional<PodSecurity> parsePodSecurity(std::string_view name) {
  if (name == "restricted") return PodSecurity::kRestricted;
  if (name == "baseline") return PodSecurity::kBaseline;
  if (name == "privileged") return PodSecurity::kPrivileged;
  return std::nullopt;
}

const char* podSecurityName(PodSecurity level) {
  switch (level) {
    case PodSecurity::kRestricted:
      return "restricted";
    case PodSecurity::kBaseline:
      return "baseline";
    case PodSecurity::kPrivileged:
      return "privileged";
  }
  return "?";
}

Containment containmentOf(const nlohmann::json& artifact, Containment fallback) {
  if (!artifact.is_object()) return fallback;
  const auto it = artifact.find(kContainmentMember);
  if (it == artifact.end() || !it->is_object()) return fallback;
  if (const auto level = it->find("pod_security"); level != it->end() && level->is_string()) {
    if (auto parsed = parsePodSecurity(level->get<std::string>())) fallback.pod_security = *parsed;
  }
  if (const auto u = it->find("user_namespace"); u != it->end() && u->is_boolean())
    fallback.user_namespace = u->get<bool>();
  return fallback;
}

nlohmann::json toJson(const Containment& c) {
  return {{"pod_security", podSecurityName(c.pod_security)}, {"user_namespace", c.user_namespace}};
}

Expected<ContainerSecurity> readSecurityContext(const nlohmann::json* container,
                                                const nlohmann::json* pod, PodSecurity ceiling,
                                                std::string_view where, std::string_view widen) {
  ContainerSecurity s;
  Reader reader(ceiling, widen);
  const std::string at = std::string(where) + (where.empty() ? "" : ".") + "securityContext";
  if (pod != nullptr && !pod->is_null()) {
    if (Status st = reader.pod(*pod, "(the pod's) " + at, s); !st) return st.error();
  }
  if (container != nullptr && !container->is_null()) {
    // The container's members replace the pod's (Kubernetes' precedence).
    if (Status st = reader.container(*container, at, s); !st) return st.error();
  }
  if (ceiling == PodSecurity::kRestricted && s.run_as_user && *s.run_as_user == 0)
    return reader.refuse(at + ".runAsUser", "0 (root)").error();
  if (s.run_as_non_root && s.run_as_user && *s.run_as_user == 0)
    return Error(at + ": runAsNonRoot is true and runAsUser is 0");
  return s;
}

std::vector<std::string> effectiveCapabilities(const ContainerSecurity& s, PodSecurity ceiling) {
  std::set<std::string> caps;
  if (ceiling != PodSecurity::kRestricted) caps.insert(kDefaultSet.begin(), kDefaultSet.end());
  for (const auto& d : s.cap_drop) {
    if (d == "ALL") caps.clear();
    caps.erase(d);
  }
  caps.insert(s.cap_add.begin(), s.cap_add.end());
  return {caps.begin(), caps.end()};
}

}  // namespace plugboard::host
