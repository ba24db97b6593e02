// The host kit's child spawning on its own: pipes, environment, working directory, limits
// and the errors that name what failed.
#include "plugboard/host/spawn.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "tests/support/files.h"

namespace plugboard::host {
namespace {

std::string readAll(const Fd& fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd.get(), buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  return out;
}

int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

SpawnOptions shell(const std::string& script) {
  SpawnOptions o;
  o.program = "/bin/sh";
  o.argv = {"/bin/sh", "-c", script};
  o.env = environmentWith({{"KIT_TEST", "yes"}});
  return o;
}

TEST(SpawnTest, RunsAProgramOnPipesInItsOwnDirectoryEnvironmentAndProcessGroup) {
  plugboard::testing::TempDir dir;
  auto o = shell(
      "read line; echo \"$line $KIT_TEST $(pwd) $(cut -d' ' -f5 /proc/$$/stat) $$\"; echo oops "
      ">&2");
  o.cwd = dir.path().string();
  auto child = spawn(o);
  ASSERT_TRUE(child.ok()) << child.error().message();
  ASSERT_EQ(::write(child->in.get(), "hi\n", 3), 3);
  child->in.reset();
  const std::string out = readAll(child->out);
  const std::string pid = std::to_string(child->pid);
  EXPECT_EQ(out, "hi yes " + dir.path().string() + " " + pid + " " + pid + "\n");
  EXPECT_EQ(readAll(child->err), "oops\n");
  EXPECT_EQ(reap(child->pid), 0);
}

TEST(SpawnTest, AppliesLimits) {
  auto o = shell("ulimit -n");
  o.limits.push_back({RLIMIT_NOFILE, 42, 42, "option 'open_files'", "42"});
  auto child = spawn(o);
  ASSERT_TRUE(child.ok()) << child.error().message();
  EXPECT_EQ(readAll(child->out), "42\n");
  EXPECT_EQ(reap(child->pid), 0);
}

// The passed descriptor (here a close-on-exec memfd, as the runtime's private copies are)
// is the child's descriptor 3 and the only one above 2; on the channel's descriptors 3
// and 4 it would clash, and is refused.
TEST(SpawnTest, PassesOneDescriptorAsTheNumberAskedFor) {
  Fd memory(::memfd_create("spawn-test", MFD_CLOEXEC));
  ASSERT_GE(memory.get(), 0);
  ASSERT_EQ(::write(memory.get(), "in memory\n", 10), 10);
  Fd other(::open("/dev/null", O_RDONLY));  // not close-on-exec: still not inherited
  auto o = shell("cat /proc/self/fd/3; ls /proc/$$/fd");
  o.pass_fd = memory.get();
  o.pass_fd_as = 3;
  auto child = spawn(o);
  ASSERT_TRUE(child.ok()) << child.error().message();
  EXPECT_EQ(readAll(child->out), "in memory\n0\n1\n2\n3\n");
  EXPECT_EQ(reap(child->pid), 0);

  o.channel_on_fds_3_4 = true;
  auto clash = spawn(o);
  ASSERT_FALSE(clash.ok());
  EXPECT_NE(clash.error().message().find("that number is taken"), std::string::npos)
      << clash.error().message();
}

TEST(SpawnTest, SaysWhatFailedBeforeTheProgramRan) {
  auto o = shell("true");
  o.cwd = "/nonexistent/dir";
  o.cwd_what = "option 'cwd'";
  auto bad_dir = spawn(o);
  ASSERT_FALSE(bad_dir.ok());
  EXPECT_EQ(bad_dir.error().message().rfind(
                "cannot change to the directory '/nonexistent/dir' (option 'cwd'): ", 0),
            0u)
      << bad_dir.error().message();

  auto missing = shell("true");
  missing.program = "/nonexistent/program";
  auto not_run = spawn(missing);
  ASSERT_FALSE(not_run.ok());
  EXPECT_EQ(not_run.error().message(),
            "cannot run /nonexistent/program: No such file or directory");
}

TEST(SpawnTest, RunsToTheEndAndFindsPrograms) {
  EXPECT_EQ(runToEnd({"/bin/sh", "-c", "exit 3"}, std::chrono::seconds(10)), 3);
  EXPECT_EQ(runToEnd({"/nonexistent/program"}, std::chrono::seconds(10)), -1);
  EXPECT_EQ(findExecutable("sh").value_or("").ends_with("/sh"), true);
  EXPECT_FALSE(findExecutable("/nonexistent/program").has_value());
  EXPECT_FALSE(findExecutable("no-such-program-anywhere").has_value());
}

}  // namespace
}  // namespace plugboard::host
