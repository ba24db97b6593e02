// plugboard/host/containment.h: the grammars of what reaches a container runtime's command
// line, and Kubernetes' Pod Security Standards as ceilings on a securityContext.
#include <plugboard/host/containment.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace plugboard::host {
namespace {

using Json = nlohmann::json;

TEST(ContainmentRulesTest, ImageReferencesFollowDockersGrammar) {
  for (const char* good :
       {"busybox", "busybox:latest", "docker.io/library/busybox:1.36",
        "localhost/plugboard/hello:1.2.0", "localhost:5000/a/b-c__d.e:v1.2_3",
        "quay.io/argoproj/argocli:v3.5",
        "registry.example.com/"
        "x@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "[::1]:5000/x:y", "docker://quay.io/x:1", "containers-storage:localhost/x:1",
        "oci-archive:/srv/images/hello.tar", "oci-archive:/srv/images/hello.tar:localhost/h:1",
        "dir:/srv/images/hello", "python:3.11-alpine"}) {
    EXPECT_TRUE(checkImageReference(good).ok()) << good;
  }
  for (const char* bad : {"", "--volume=/:/host", "--privileged", "-v", "busybox --privileged",
                          "Busybox", "busybox:", "busybox:-x", "a//b", "/abs", "busybox\n",
                          "x@sha256:short", "oci-archive:relative.tar", "oci-archive:/a b.tar",
                          "dir:", "docker://--privileged", "localhost:99999999/x", "a..b/c"}) {
    EXPECT_FALSE(checkImageReference(bad).ok()) << bad;
  }
  EXPECT_NE(checkImageReference("--volume=/:/host").error().message().find("read as an option"),
            std::string::npos);
}

TEST(ContainmentRulesTest, EnvironmentNamesFollowKubernetesRule) {
  for (const char* good : {"A", "a_b", "-x", ".y", "X1", "MY.VAR-2"})
    EXPECT_TRUE(checkEnvName(good).ok()) << good;
  for (const char* bad : {"", "1A", "A=B", "A B", "A\nB", "*"})
    EXPECT_FALSE(checkEnvName(bad).ok()) << bad;
}

Expected<ContainerSecurity> read(const Json& container, PodSecurity level,
                                 const Json& pod = nullptr) {
  return readSecurityContext(&container, &pod, level, "container", "widen it");
}

TEST(ContainmentRulesTest, BaselineRefusesPrivilegeAndKeepsRootAndDefaultCapabilities) {
  const auto privileged = read({{"privileged", true}}, PodSecurity::kBaseline);
  ASSERT_FALSE(privileged.ok());
  EXPECT_EQ(privileged.error().message(),
            "container.securityContext.privileged: true: refused by the baseline Pod Security "
            "Standard (widen it)");
  EXPECT_FALSE(read({{"capabilities", {{"add", {"SYS_ADMIN"}}}}}, PodSecurity::kBaseline).ok());
  EXPECT_FALSE(
      read({{"capabilities", {{"add", {"CAP_SYS_PTRACE"}}}}}, PodSecurity::kBaseline).ok());
  EXPECT_FALSE(read({{"seccompProfile", {{"type", "Unconfined"}}}}, PodSecurity::kBaseline).ok());
  EXPECT_FALSE(read({{"procMount", "Unmasked"}}, PodSecurity::kBaseline).ok());
  EXPECT_FALSE(read(Json::object(), PodSecurity::kBaseline, {{"sysctls", {{{"name", "x"}}}}}).ok());

  const auto root =
      read({{"runAsUser", 0}, {"capabilities", {{"add", {"NET_RAW"}}, {"drop", {"KILL"}}}}},
           PodSecurity::kBaseline);
  EXPECT_FALSE(root.ok());  // NET_RAW is not in the baseline set
  const auto ok = read({{"runAsUser", 0},
                        {"readOnlyRootFilesystem", true},
                        {"capabilities", {{"add", {"cap_mknod"}}, {"drop", {"KILL"}}}}},
                       PodSecurity::kBaseline);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(*ok->run_as_user, 0);
  EXPECT_TRUE(ok->read_only_root);
  const auto caps = effectiveCapabilities(*ok, PodSecurity::kBaseline);
  EXPECT_NE(std::find(caps.begin(), caps.end(), "MKNOD"), caps.end());
  EXPECT_EQ(std::find(caps.begin(), caps.end(), "KILL"), caps.end());
  EXPECT_NE(std::find(caps.begin(), caps.end(), "CHOWN"), caps.end());
}

TEST(ContainmentRulesTest, RestrictedRefusesRootAndEscalationAndGivesNoCapabilities) {
  EXPECT_FALSE(read({{"runAsUser", 0}}, PodSecurity::kRestricted).ok());
  EXPECT_FALSE(read(Json::object(), PodSecurity::kRestricted, {{"runAsUser", 0}}).ok());
  EXPECT_FALSE(read({{"allowPrivilegeEscalation", true}}, PodSecurity::kRestricted).ok());
  EXPECT_FALSE(read({{"runAsNonRoot", false}}, PodSecurity::kRestricted).ok());
  EXPECT_FALSE(read({{"capabilities", {{"add", {"CHOWN"}}}}}, PodSecurity::kRestricted).ok());
  const auto ok = read({{"runAsUser", 8737},
                        {"runAsNonRoot", true},
                        {"allowPrivilegeEscalation", false},
                        {"capabilities", {{"add", {"NET_BIND_SERVICE"}}, {"drop", {"ALL"}}}}},
                       PodSecurity::kRestricted);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(effectiveCapabilities(*ok, PodSecurity::kRestricted),
            std::vector<std::string>{"NET_BIND_SERVICE"});
  EXPECT_TRUE(effectiveCapabilities(ContainerSecurity{}, PodSecurity::kRestricted).empty());
  // The container's user replaces the pod's.
  const auto over = read({{"runAsUser", 1000}}, PodSecurity::kRestricted, {{"runAsUser", 0}});
  EXPECT_FALSE(over.ok());  // the pod's own field is refused where it is written
}

TEST(ContainmentRulesTest, PrivilegedAllowsWhatTheOperatorWidened) {
  const auto ok = read({{"privileged", true},
                        {"allowPrivilegeEscalation", true},
                        {"capabilities", {{"add", {"SYS_ADMIN"}}}}},
                       PodSecurity::kPrivileged);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_TRUE(ok->privileged);
  EXPECT_TRUE(ok->allow_privilege_escalation);
}

TEST(ContainmentRulesTest, WrongTypesSayWhatIsExpected) {
  EXPECT_EQ(read({{"runAsUser", "0"}}, PodSecurity::kPrivileged).error().message(),
            "container.securityContext.runAsUser must be an integer from 0 to 2147483647");
  EXPECT_FALSE(read({{"privileged", "yes"}}, PodSecurity::kPrivileged).ok());
  EXPECT_FALSE(
      read({{"capabilities", {{"add", {"--privileged"}}}}}, PodSecurity::kPrivileged).ok());
  EXPECT_FALSE(read(Json::array(), PodSecurity::kPrivileged).ok());
}

TEST(ContainmentRulesTest, TheArtifactCarriesTheCeiling) {
  const Json artifact = {{kContainmentMember, toJson({PodSecurity::kPrivileged, false})}};
  const Containment c = containmentOf(artifact, {});
  EXPECT_EQ(c.pod_security, PodSecurity::kPrivileged);
  EXPECT_FALSE(c.user_namespace);
  EXPECT_EQ(containmentOf(Json::object(), {PodSecurity::kRestricted, true}).pod_security,
            PodSecurity::kRestricted);
  EXPECT_EQ(containmentOf({{kContainmentMember, {{"pod_security", "bogus"}}}}, {}).pod_security,
            PodSecurity::kBaseline);
}

}  // namespace
}  // namespace plugboard::host
