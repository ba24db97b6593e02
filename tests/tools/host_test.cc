// plugboard-host: a native plugin served over the out-of-process protocol, driven through
// its stdin and stdout as a deployer drives it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include <plugboard/host/spawn.h>

#include "tests/support/paths.h"
#include "tests/support/protocol_lines.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

std::string host() { return (buildDir() / "plugboard-host").string(); }

const Json kHello = {{"type", "hello"}, {"protocols", {1}}};

Json execute(int id, const Json& args) {
  return {{"type", "execute"}, {"id", id}, {"request", {{"rpc", "template.execute"}, {"key", "scripted"}, {"via", "name"}, {"args", args}}}};
}

TEST(HostTest, GreetsRunsCallsAndKeepsStrayOutputOffTheChannel) {
  auto r = run({host(), fixture("scripted").string()},
               lines({kHello, execute(1, {{"id", "a"}, {"print", "stray print\n"}, {"log", "hello log"}}),
                      execute(2, {{"phase", "Failed"}, {"message", "no"}}), {{"type", "shutdown"}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = parseLines(r.out);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0]["type"], "hello");
  EXPECT_EQ(messages[0]["protocol"], 1);
  EXPECT_EQ(messages[0]["manifest"]["name"], "scripted");
  const Json* one = resultFor(messages, 1);
  const Json* two = resultFor(messages, 2);
  ASSERT_TRUE(one && two) << r.out;
  EXPECT_EQ((*one)["result"]["phase"], "Succeeded");
  EXPECT_EQ((*two)["result"], Json({{"phase", "Failed"}, {"message", "no"}}));  // as the plugin answered
  bool logged = false;
  // Written on the thread of call 1: the frame names the call, whose step keeps the line.
  for (const auto& m : messages)
    logged = logged || (m["type"] == "log" && m["message"] == "hello log" && m["id"] == 1);
  EXPECT_TRUE(logged) << r.out;
  EXPECT_NE(r.err.find("stray print"), std::string::npos);  // on stderr, not the channel
}

// The channel on descriptors 3 and 4, as the container deployer passes it: the shell
// puts the test's stdin and stdout there and gives the program /dev/null and stderr.
RunResult runOnFds3And4(const std::vector<std::string>& argv, const std::string& input,
                        const std::string& fds = "3,4") {
  std::vector<std::string> shell = {"/bin/sh", "-c",
                                    "exec 3<&0 4>&1 </dev/null >&2; PLUGBOARD_PROTOCOL_FDS=" + fds +
                                        " exec \"$@\"",
                                    "sh"};
  shell.insert(shell.end(), argv.begin(), argv.end());
  return run(shell, input);
}

TEST(HostTest, ServesTheChannelOnTheDescriptorsPlugboardProtocolFdsNames) {
  auto r = runOnFds3And4({host(), fixture("scripted").string()},
                         lines({kHello, execute(1, {{"id", "a"}, {"print", "stray print\n"}}), {{"type", "shutdown"}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  const Json* one = resultFor(messages, 1);
  ASSERT_TRUE(one) << r.out << r.err;
  EXPECT_EQ((*one)["result"]["phase"], "Succeeded");
  EXPECT_NE(r.err.find("stray print"), std::string::npos);

  auto wrong = runOnFds3And4({host(), fixture("scripted").string()}, lines({kHello}), "3,77");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("PLUGBOARD_PROTOCOL_FDS='3,77' does not name two open descriptors"), std::string::npos)
      << wrong.err;
}

TEST(HostTest, KeepsEveryFrameWithinTheLimitTheHelloSets) {
  const Json hello = {{"type", "hello"}, {"protocols", {1}}, {"frame_limit", 4096}};
  auto r = run({host(), fixture("hog").string()}, lines({hello,
                                                         execute(1, {{"result_bytes", 5000}}),
                                                         execute(2, {{"log_bytes", 10000}}),
                                                         {{"type", "shutdown"}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expectFramesKeptWithin(4096, "hog", r.out);
}

TEST(HostTest, ReadsFramesUpToTheLimitTheHelloSets) {
  const std::string padding(20 << 20, 'p');  // over the default limit of 16 MiB
  const Json hello = {{"type", "hello"}, {"protocols", {1}}, {"frame_limit", 24 << 20}};
  auto r = run({host(), fixture("hog").string()},
               lines({hello, execute(1, {{"padding", padding}}), {{"type", "shutdown"}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  const Json* one = resultFor(messages, 1);
  ASSERT_TRUE(one) << r.out.substr(0, 400);
  EXPECT_EQ((*one)["result"]["phase"], "Succeeded") << *one;
}

// A result its frame would nest beyond the runtime's limit is that call's Error; the channel
// stays in step for the next call.
TEST(HostTest, AnswersAResultTooDeepForItsFrameWithAnError) {
  const auto call = [](int id, const Json& args) {
    return Json{{"type", "execute"}, {"id", id}, {"request", {{"args", args}}}};
  };
  // {"phase":"Succeeded","outputs":{"nested":[...]}}: two levels more than its arrays.
  auto r = run({host(), fixture("scripted").string()},
               lines({kHello, call(1, {{"nest", 509}}), call(2, {{"nest", 510}}), call(3, {}),
                      {{"type", "shutdown"}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  const Json* fits = resultFor(messages, 1);
  const Json* deep = resultFor(messages, 2);
  const Json* next = resultFor(messages, 3);
  ASSERT_TRUE(fits && deep && next) << r.out;
  EXPECT_EQ((*fits)["result"]["phase"], "Succeeded");
  EXPECT_EQ((*deep)["result"]["phase"], "Error");
  EXPECT_EQ((*deep)["result"]["message"],
            "plugin 'scripted' returned a result nested deeper than 511 levels");
  EXPECT_EQ((*next)["result"]["phase"], "Succeeded");
}

TEST(HostTest, CancelStopsARunningCall) {
  auto r = run({host(), plugin("sleep").string()},
               lines({kHello,
                      {{"type", "execute"}, {"id", 7}, {"request", {{"rpc", "template.execute"}, {"args", {{"seconds", 60}}}}}},
                      {{"type", "cancel"}, {"id", 7}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  const Json* seven = resultFor(messages, 7);
  ASSERT_TRUE(seven) << r.out;
  EXPECT_EQ((*seven)["result"]["phase"], "Error");
}

TEST(HostTest, RefusesProtocolErrorsAndUnloadablePlugins) {
  auto garbage = run({host(), plugin("hello").string()}, "this is not a frame\n");
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_NE(garbage.err.find("not a protocol message"), std::string::npos) << garbage.err;
  auto early = run({host(), plugin("hello").string()}, lines({execute(1, Json::object())}));
  EXPECT_EQ(early.exit_code, 2);
  EXPECT_NE(early.err.find("'execute' before 'hello'"), std::string::npos) << early.err;
  auto version = run({host(), plugin("hello").string()}, lines({{{"type", "hello"}, {"protocols", {7}}}}));
  EXPECT_EQ(version.exit_code, 2);
  EXPECT_NE(version.err.find("offers protocols [7]; this host speaks 1"), std::string::npos) << version.err;
  auto missing = run({host(), "/nonexistent/plugin.so"}, lines({kHello}));
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("/nonexistent/plugin.so"), std::string::npos) << missing.err;
  EXPECT_TRUE(missing.out.empty());
}

// --- the host's threads: an I/O thread, calls on a bounded pool, cancels delivered at once

// plugboard-host driven frame by frame, as a deployer drives it: the test writes when it
// chooses (on a thread of its own, so that the host's replies never wait for it) and
// reads the frames as they come.
class HostSession {
 public:
  explicit HostSession(std::vector<std::string> args) {
    host::ignoreSigpipe();  // a write to a host that ended fails instead of ending the test
    host::SpawnOptions options;
    options.program = host();
    options.argv = {host()};
    options.argv.insert(options.argv.end(), args.begin(), args.end());
    options.env = host::environmentWith({});
    auto spawned = host::spawn(options);
    if (!spawned) ADD_FAILURE() << spawned.error().message();
    else child_ = std::move(*spawned);
  }
  ~HostSession() {
    if (writer_.joinable()) writer_.join();
    if (child_.pid > 0 && exit_code_ < 0) {
      ::kill(child_.pid, SIGKILL);
      ::waitpid(child_.pid, nullptr, 0);
    }
  }

  // Writes `bytes` in pieces of `piece` bytes (0: in one write) on the writer thread,
  // after what was sent before; with `close`, closes the host's input afterwards.
  void sendText(std::string bytes, std::size_t piece = 0, bool close = false) {
    if (writer_.joinable()) writer_.join();
    writer_ = std::thread([this, bytes = std::move(bytes), piece, close] {
      const std::size_t step = piece == 0 ? bytes.size() : piece;
      for (std::size_t done = 0; done < bytes.size();) {
        const ssize_t n = ::write(child_.in.get(), bytes.data() + done, std::min(step, bytes.size() - done));
        if (n > 0) {
          done += static_cast<std::size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
          pollfd p{child_.in.get(), POLLOUT, 0};
          ::poll(&p, 1, -1);
        } else {
          break;  // the host is gone
        }
      }
      if (close) child_.in.reset();
    });
  }
  void send(const std::vector<Json>& messages, std::size_t piece = 0, bool close = false) {
    sendText(lines(messages), piece, close);
  }

  // Reads frames until `enough` holds for all read so far; false if the host's output
  // ended first.
  bool readUntil(const std::function<bool(const std::vector<Json>&)>& enough) {
    while (!enough(messages)) {
      const auto line = nextLine();
      if (!line) return false;
      raw_lines.push_back(*line);
      messages.push_back(Json::parse(*line, nullptr, false));
      EXPECT_FALSE(messages.back().is_discarded()) << "not a protocol line: " << line->substr(0, 200);
    }
    return true;
  }
  // Reads to the end of the host's output and waits for it: its exit code.
  int finish() {
    readUntil([](const auto&) { return false; });
    if (writer_.joinable()) writer_.join();
    int status = 0;
    ::waitpid(child_.pid, &status, 0);
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    char buf[4096];
    for (ssize_t n; (n = ::read(child_.err.get(), buf, sizeof buf)) > 0;) err.append(buf, static_cast<std::size_t>(n));
    return exit_code_;
  }

  std::vector<Json> messages;
  std::vector<std::string> raw_lines;
  std::string err;

 private:
  std::optional<std::string> nextLine() {
    for (;;) {
      if (const auto end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return line;
      }
      char buf[65536];
      const ssize_t n = ::read(child_.out.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      buffer_.append(buf, static_cast<std::size_t>(n));
    }
  }

  host::Spawned child_;
  std::thread writer_;
  std::string buffer_;
  int exit_code_ = -1;
};

// A call to the scripted fixture that logs "started ID" and then waits (cancellably
// unless `ignore_cancel`).
Json waitingCall(int id, bool ignore_cancel = false) {
  return execute(id, {{"id", "c" + std::to_string(id)}, {"log", "started " + std::to_string(id)},
                      {"sleep_ms", 30000}, {"ignore_cancel", ignore_cancel}});
}

Json cancel(int id) { return {{"type", "cancel"}, {"id", id}}; }

std::size_t count(const std::vector<Json>& messages, const std::string& type) {
  return static_cast<std::size_t>(std::count_if(messages.begin(), messages.end(),
                                                [&](const Json& m) { return m["type"] == type; }));
}

bool logged(const std::vector<Json>& messages, const std::string& text) {
  return std::any_of(messages.begin(), messages.end(),
                     [&](const Json& m) { return m["type"] == "log" && m["message"] == text; });
}

// Every cancel reaches its call, the running ones and those that come an instant after
// their execute alike: all are answered, long before the calls would have ended on their
// own, and the host still serves.
TEST(HostTest, EveryCancelledCallIsAnswered) {
  constexpr int kCalls = 100;
  HostSession session({fixture("scripted").string()});
  std::vector<Json> first = {kHello};
  for (int id = 1; id <= kCalls / 2; ++id) first.push_back(waitingCall(id));
  session.send(first);
  // Half are cancelled once they run ...
  ASSERT_TRUE(session.readUntil([](const auto& m) { return count(m, "log") == kCalls / 2; }));
  std::vector<Json> then;
  for (int id = 1; id <= kCalls / 2; ++id) then.push_back(cancel(id));
  // ... half right behind their execute, whichever instant that meets.
  for (int id = kCalls / 2 + 1; id <= kCalls; ++id) {
    then.push_back(waitingCall(id));
    then.push_back(cancel(id));
  }
  then.push_back(execute(kCalls + 1, {{"message", "still serving"}}));
  session.send(then);
  ASSERT_TRUE(session.readUntil([](const auto& m) { return count(m, "result") == kCalls + 1; }));
  for (int id = 1; id <= kCalls; ++id) {
    const Json* r = resultFor(session.messages, id);
    ASSERT_TRUE(r) << id;
    EXPECT_EQ((*r)["result"]["phase"], "Error") << *r;
    const std::string message = (*r)["result"]["message"];
    EXPECT_TRUE(message == "cancelled after call 1" || message == "cancelled before it started") << *r;
    if (id <= kCalls / 2) {
      EXPECT_EQ(message, "cancelled after call 1");
    }
  }
  const Json* last = resultFor(session.messages, kCalls + 1);
  ASSERT_TRUE(last);
  EXPECT_EQ((*last)["result"]["message"], "still serving");
  session.send(std::vector<Json>{{{"type", "shutdown"}}}, 0, true);
  EXPECT_EQ(session.finish(), 0) << session.err;
}

// --threads bounds the calls running at once: a third call waits while two run, a cancel
// answers it without its ever starting, and it runs once a thread is free.
TEST(HostTest, RunsAtMostTheThreadsItIsGivenAndACallWaitingForOneCanBeCancelled) {
  HostSession session({fixture("scripted").string(), "--threads", "2"});
  session.send({kHello, waitingCall(1), waitingCall(2), waitingCall(3)});
  ASSERT_TRUE(session.readUntil([](const auto& m) { return logged(m, "started 1") && logged(m, "started 2"); }));
  session.send(std::vector<Json>{cancel(3)});
  ASSERT_TRUE(session.readUntil([](const auto& m) { return count(m, "result") == 1; }));
  const Json* three = resultFor(session.messages, 3);
  ASSERT_TRUE(three) << session.messages.back();
  EXPECT_EQ((*three)["result"], Json({{"phase", "Error"}, {"message", "cancelled before it started"}}));
  EXPECT_FALSE(logged(session.messages, "started 3"));
  // One call ends; the next waiting one gets its thread.
  session.send({waitingCall(4), cancel(1)});
  ASSERT_TRUE(session.readUntil([](const auto& m) { return logged(m, "started 4"); }));
  // Its thread answered call 1 before it took call 4.
  const Json* one = resultFor(session.messages, 1);
  ASSERT_TRUE(one) << session.raw_lines.back();
  EXPECT_EQ((*one)["result"]["message"], "cancelled after call 1");
  session.send({cancel(2), cancel(4), {{"type", "shutdown"}}}, 0, true);
  EXPECT_EQ(session.finish(), 0) << session.err;
  EXPECT_EQ(count(session.messages, "result"), 4u);
  EXPECT_FALSE(logged(session.messages, "started 3"));
  const Json* four = resultFor(session.messages, 4);
  ASSERT_TRUE(four);
  EXPECT_EQ((*four)["result"]["message"], "cancelled after call 1");
}

// A serial plugin gets one call at a time whatever --threads says, and --threads 1 makes
// a parallel plugin's calls take turns: the probe fails a call that finds another inside.
TEST(HostTest, RunsASerialPluginsCallsOneAtATimeAndKeepsToThreadsOne) {
  for (const auto& [probe, threads] : {std::pair{"serial_probe", "8"}, std::pair{"parallel_probe", "1"}}) {
    HostSession session({fixture(probe).string(), "--threads", threads});
    std::vector<Json> messages = {kHello};
    for (int id = 1; id <= 4; ++id) messages.push_back(execute(id, {{"ms", 100}}));
    messages.push_back({{"type", "shutdown"}});
    session.send(messages);
    EXPECT_EQ(session.finish(), 0) << session.err;
    for (int id = 1; id <= 4; ++id) {
      const Json* r = resultFor(session.messages, id);
      ASSERT_TRUE(r) << probe << " " << id;
      EXPECT_EQ((*r)["result"]["phase"], "Succeeded") << probe << ": " << *r;
    }
  }
}

TEST(HostTest, RefusesABadThreadCount) {
  for (const char* bad : {"0", "x", "-3", "100001"}) {
    auto r = run({host(), fixture("scripted").string(), "--threads", bad}, lines({kHello}));
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("--threads must be a number from 1 to 100000, not '" + std::string(bad) + "'"),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// Many calls answer at once with results and log lines larger than a pipe takes in one
// write: every frame arrives whole, one per line, whether the requests came a byte at a
// time or all in one write.
TEST(HostTest, RepliesOfConcurrentCallsNeverInterleave) {
  constexpr int kCalls = 120;
  for (const std::size_t piece : {std::size_t{1}, std::size_t{0}}) {
    HostSession session({fixture("hog").string()});
    std::vector<Json> messages = {kHello};
    for (int id = 1; id <= kCalls; ++id) {
      messages.push_back(execute(id, {{"log_bytes", 9000 + id}, {"result_bytes", 9000 + id}}));
    }
    messages.push_back({{"type", "shutdown"}});
    session.send(messages, piece, false);
    EXPECT_EQ(session.finish(), 0) << session.err;
    std::set<std::size_t> results, logs;
    for (const auto& m : session.messages) {
      if (m["type"] == "log") {
        EXPECT_TRUE(logs.insert(m["message"].get<std::string>().size()).second);
      } else if (m["type"] == "result") {
        const std::size_t id = m["id"];
        EXPECT_TRUE(results.insert(id).second) << "two results for " << id;
        EXPECT_EQ(m["result"]["outputs"]["parameters"]["blob"].get<std::string>().size(), 9000 + id)
            << "piece " << piece << " id " << id;
      }
    }
    EXPECT_EQ(results.size(), static_cast<std::size_t>(kCalls)) << "piece " << piece;
    EXPECT_EQ(logs.size(), static_cast<std::size_t>(kCalls)) << "piece " << piece;
    EXPECT_EQ(logs.empty() ? 0 : *logs.begin(), 9001u);
  }
}

// At the end of its input the host cancels its calls and ends after a short grace: a call
// that answers its cancel is answered, one waiting for a thread never starts, and one that
// ignores cancellation (it would run 30 s) does not hold the host.
TEST(HostTest, AtTheEndOfItsInputCancelsItsCallsAndEndsWithoutTheOnesThatIgnoreIt) {
  HostSession session({fixture("scripted").string(), "--threads", "2"});
  session.send({kHello, waitingCall(1), waitingCall(2, true), waitingCall(3)});
  ASSERT_TRUE(session.readUntil([](const auto& m) { return logged(m, "started 1") && logged(m, "started 2"); }));
  session.sendText(std::string(), 0, true);
  EXPECT_EQ(session.finish(), 0) << session.err;
  const Json* one = resultFor(session.messages, 1);
  const Json* three = resultFor(session.messages, 3);
  ASSERT_TRUE(one && three) << session.raw_lines.size();
  EXPECT_EQ((*one)["result"]["message"], "cancelled after call 1");
  EXPECT_EQ((*three)["result"]["message"], "cancelled before it started");
  EXPECT_EQ(resultFor(session.messages, 2), nullptr);
  EXPECT_FALSE(logged(session.messages, "started 3"));
}

}  // namespace
}  // namespace plugboard::testing
