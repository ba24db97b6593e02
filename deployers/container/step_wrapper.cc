// plugboard-step-wrapper: runs a container template's command inside its container and,
// once it has ended, sends the files of its output parameters to the runtime, so that the
// container can be removed by `podman run --rm` as it ends (docs/containers.md, "Container
// and script templates"; the decision in docs/decisions.md, "Container outputs through a
// wrapper in the container").
//
//   plugboard-step-wrapper LIMIT PATH... -- COMMAND [ARG...]
//
// The container deployer mounts this file read-only into the container (template_run.h)
// and makes it the entrypoint. It is linked statically: it runs in any image, whatever its
// libc or shell, as any user. It
// * starts COMMAND (looked up in PATH as exec does) with the wrapper's stdin, stdout,
//   stderr, environment and working directory, and forwards every signal it gets to it;
// * after COMMAND has ended, opens each PATH as COMMAND would (inside the container: a
//   link is resolved in the container's own root, never on the machine running podman)
//   and writes to descriptor 3 one record per PATH, in order:
//     "file <size>\n" <size bytes>   a regular file of at most LIMIT bytes
//     "error <size>\n" <reason>      anything else (missing, not a regular file, too big)
// * exits with COMMAND's exit code, or 128 + the signal that killed it (as a shell does,
//   and as podman reports a container's main process killed by a signal).
// Descriptor 3 is closed to COMMAND. Nothing here trusts COMMAND: the runtime checks every
// record it reads.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

constexpr int kChannel = 3;
constexpr const char* kName = "plugboard-step-wrapper";

void writeAll(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;  // the runtime stopped reading: it reports what is missing
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void record(const char* kind, const char* data, std::size_t n) {
  char head[64];
  const int h = std::snprintf(head, sizeof head, "%s %zu\n", kind, n);
  writeAll(kChannel, head, static_cast<std::size_t>(h));
  writeAll(kChannel, data, n);
}

void refuse(const char* why) { record("error", why, std::strlen(why)); }

// One record for `path`: its content when it is a regular file of at most `limit` bytes.
// `buffer` holds limit + 1 bytes.
void save(const char* path, std::size_t limit, char* buffer) {
  // Not blocking on a FIFO, not taking a terminal: checked to be a regular file below.
  const int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    refuse(std::strerror(errno));
    return;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    refuse("it is not a regular file");
    return;
  }
  // Read to its end, whatever its size says (files in /proc say 0).
  std::size_t got = 0;
  while (got <= limit) {
    const ssize_t n = ::read(fd, buffer + got, limit + 1 - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      refuse(std::strerror(e));
      return;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got > limit) {
    char why[96];
    std::snprintf(why, sizeof why, "it holds more than %zu bytes", limit);
    refuse(why);
    return;
  }
  record("file", buffer, got);
}

}  // namespace

int main(int argc, char** argv) {
  int dashes = 2;
  while (dashes < argc && std::strcmp(argv[dashes], "--") != 0) ++dashes;
  char* end = nullptr;
  const unsigned long long limit = argc > 1 ? std::strtoull(argv[1], &end, 10) : 0;
  if (argc < 2 || end == argv[1] || *end != '\0' || limit > (1ull << 30) || dashes + 1 >= argc) {
    std::fprintf(stderr, "%s: usage: %s LIMIT PATH... -- COMMAND [ARG...]\n", kName, kName);
    return 127;
  }
  // Not COMMAND's: it cannot write records of its own (but see the runtime's checks).
  ::fcntl(kChannel, F_SETFD, FD_CLOEXEC);

  // Every signal waited for here, none handled: COMMAND starts with the mask this process
  // had and the dispositions it inherited.
  sigset_t all, before;
  sigfillset(&all);
  sigprocmask(SIG_SETMASK, &all, &before);
  const pid_t child = ::fork();
  if (child < 0) {
    std::fprintf(stderr, "%s: cannot start %s: %s\n", kName, argv[dashes + 1], std::strerror(errno));
    return 126;
  }
  if (child == 0) {
    sigprocmask(SIG_SETMASK, &before, nullptr);
    ::execvp(argv[dashes + 1], argv + dashes + 1);
    const int e = errno;
    std::fprintf(stderr, "%s: cannot run %s: %s\n", kName, argv[dashes + 1], std::strerror(e));
    _exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
  }

  int status = 0;
  for (bool ended = false; !ended;) {
    siginfo_t info{};
    const int sig = sigwaitinfo(&all, &info);
    if (sig < 0) continue;
    if (sig != SIGCHLD) {
      ::kill(child, sig);
      continue;
    }
    // Reaps whatever ended (as PID 1, without --init, orphans come here too).
    for (;;) {
      int s = 0;
      const pid_t p = ::waitpid(-1, &s, WNOHANG);
      if (p <= 0) break;
      if (p == child) {
        status = s;
        ended = true;
      }
    }
  }

  const int paths = dashes - 2;
  if (paths > 0) {
    char* buffer = static_cast<char*>(std::malloc(static_cast<std::size_t>(limit) + 1));
    for (int i = 0; i < paths; ++i) {
      if (buffer == nullptr) {
        refuse("out of memory");
      } else {
        save(argv[2 + i], static_cast<std::size_t>(limit), buffer);
      }
    }
    std::free(buffer);
  }
  ::close(kChannel);
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}
