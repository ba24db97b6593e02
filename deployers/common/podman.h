// deployers/common/podman.h: what the deployers that run containers with podman share
// (library plugboard_deployer_common): finding podman, the global flags these machines
// need, container names, removing a container, and the trust check of an image that
// podman reads from a file. Used by the container and argo deployers. Free functions;
// thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_PODMAN_H_
#define PLUGBOARD_DEPLOYERS_COMMON_PODMAN_H_

#include <sys/types.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <plugboard/host/trust.h>
#include <plugboard/sdk.hpp>

namespace plugboard::deployer_common {

// How podman is run: the binary and its global flags.
struct Podman {
  std::string binary = "podman";  // a path, or a name looked up in PATH
  std::string runtime = "runc";
  std::string cgroup_manager = "cgroupfs";

  // {binary, --runtime, R, --cgroup-manager, M}: the start of every podman command line.
  std::vector<std::string> global() const;
};

inline constexpr std::chrono::milliseconds kRemoveTimeout{30000};

// The absolute path of `option` (option 'podman'); throws std::runtime_error saying how to
// install it, or that the option names no executable.
std::string findPodman(const std::string& option);

// The manifest entries (JSON members, no trailing comma) of the options applyPodmanOption
// reads, for the config of every deployer that runs podman.
#define PLUGBOARD_PODMAN_OPTIONS                                                                                            \
  R"("podman": {"type": "string", "description": "the podman binary: a path, or a name looked up in PATH; default podman"},)" \
  R"("runtime": {"type": "string", "description": "the OCI runtime, podman's --runtime; default runc"},)"                     \
  R"("cgroup_manager": {"type": "string", "description": "podman's --cgroup-manager; default cgroupfs"})"

// Reads option `key` into `p` when it is one of podman, runtime, cgroup_manager; returns
// whether it was. Throws std::invalid_argument for a value that is not a non-empty string.
bool applyPodmanOption(Podman& p, const std::string& key, const Json& value);

// The option 'pull' value checked ("never", "if-not-present", "always") and as `podman
// run --pull` takes it. Throws std::invalid_argument naming option `key`.
std::string podmanPull(const std::string& key, const Json& value);

// "localhost/plugboard/hello:1.2.0" -> "hello": a part of a container name that names
// the plugin, letters, digits, '-', '_' and '.' only.
std::string imageNamePart(const std::string& image);

// The label of every container PodmanRun starts: its runtime's owner record.
inline constexpr const char* kOwnerLabel = "io.plugboard.owner";

// Runs a short command (podman's `ps`, `image inspect`) to its end: its standard output,
// or nullopt when it could not start or did not exit 0. Its stderr is discarded.
std::optional<std::string> commandOutput(const std::vector<std::string>& argv);

// "<pid>.<start>.<4 random hexadecimal digits>" (plugboard/host/owner.h ownerTag()): tells
// apart the containers of two runtimes, and lets removeLeftovers() see from a container's
// name alone whether the runtime that started it may still be alive.
std::string randomRunId();

// What runs whose process is gone (killed with SIGKILL, crashed) left behind: their
// containers (named with a run id, labelled io.plugboard.owner) and their directories in
// $TMPDIR (plugboard-step-*, plugboard-argo-*, each with an .owner file) are removed, and
// one line says so. Only what is provably an ended process's is touched (owner.h). The
// containers are found by reading the container store's list, cheaply; podman is asked
// only when a name there belongs to no live process. Once per module, at its set-up.
void removeLeftovers(const Podman& podman, const plugboard::Logger& log);
// removeLeftovers() with `podman`'s binary found (findPodman()); nothing when it is not.
void removeLeftoversOf(Podman podman, const plugboard::Logger& log);

// `podman rm --force --time 0 --ignore NAME`, repeated with a growing pause until the
// container no longer exists (within kRemoveTimeout); logs a warning when it remains.
void removeContainer(const Podman& podman, const std::string& name, const plugboard::Logger& log);

// The containers this module started that are not removed yet, each with the `podman run`
// that runs it (once known) and a directory made for it: what abandon() removes when the
// runtime is about to exit without closing the plugins (plugboard/deployer.hpp), and what
// is left at the module's unloading. One per module; thread-safe.
class LiveContainers {
 public:
  static LiveContainers& instance();
  // `dir`: removed with the container; empty for none.
  void add(const std::string& name, const Podman& podman, std::string dir = {});
  // The process group of its `podman run`, killed before the container is removed.
  void setClient(const std::string& name, pid_t client);
  void remove(const std::string& name);
  // Kills each one's `podman run`, removes the container and its directory, all at once.
  void removeAll();
  ~LiveContainers();

 private:
  struct Entry {
    Podman podman;
    pid_t client = -1;
    std::string dir;
  };
  std::mutex mu_;
  std::map<std::string, Entry> live_;  // by container name
};

// One entry of LiveContainers, removed from it when this is destroyed: a member declared
// before what must be gone first (the directory the entry names), so that abandon() still
// finds the entry while that is not yet removed. Not thread-safe.
class LiveContainer {
 public:
  LiveContainer() = default;
  ~LiveContainer();
  LiveContainer(const LiveContainer&) = delete;
  LiveContainer& operator=(const LiveContainer&) = delete;
  // LiveContainers::add(); at most once.
  void add(const std::string& name, const Podman& podman, std::string dir = {});

 private:
  std::string name_;
};

// A directory of its own in $TMPDIR (else /tmp), with an .owner file (plugboard/host/owner.h),
// removed with what it holds when this is destroyed; removeLeftovers() removes it after a
// SIGKILL.
class TemporaryDirectory {
 public:
  // Throws std::runtime_error saying why it cannot be made.
  explicit TemporaryDirectory(const std::string& prefix);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An image that podman reads from a file or directory of this machine (a transport such as
// oci-archive:/p/x.tar[:ref]) becomes code like a plugin file: it is checked with the same
// rules; throws std::runtime_error with the refusal. Images named in a container store or
// registry are podman's to verify.
void checkImageFiles(const std::string& image, const host::TrustRules& rules);

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_PODMAN_H_
