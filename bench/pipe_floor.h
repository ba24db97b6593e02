// bench/pipe_floor.h: the floor of any out-of-process call: a raw pipe ping-pong between
// two processes moving the same bytes as a call's protocol frames, with no work between.
#ifndef PLUGBOARD_BENCH_PIPE_FLOOR_H_
#define PLUGBOARD_BENCH_PIPE_FLOOR_H_

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_support.h"

namespace plugboard::bench {
namespace pipe_floor_detail {

inline void writeAll(int fd, const std::string& s) {
  for (std::size_t done = 0; done < s.size();) {
    const ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) std::exit(1);
    done += static_cast<std::size_t>(n);
  }
}

// Reads up to and including the next newline (the messages are one line each). On a
// non-blocking descriptor it yields the processor while nothing has come.
inline void readLine(int fd, std::string& buf) {
  buf.clear();
  char chunk[4096];
  while (buf.empty() || buf.back() != '\n') {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EAGAIN) {
      sched_yield();
      continue;
    }
    if (n <= 0) ::_exit(0);
    buf.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace pipe_floor_detail

// `calls` round trips: `request` to a child that answers each line with `reply`. With
// `yielding`, the parent waits for each answer by yielding the processor rather than
// sleeping in read(), as the process deployer's callers do for their first 200 µs.
inline Stats timePipeFloor(int calls, const std::string& request, const std::string& reply,
                           bool yielding) {
  using namespace pipe_floor_detail;
  using Clock = std::chrono::steady_clock;
  int to_child[2], from_child[2];
  if (::pipe(to_child) != 0 || ::pipe(from_child) != 0) std::exit(1);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    std::string buf;
    for (;;) {
      readLine(to_child[0], buf);
      writeAll(from_child[1], reply);
    }
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  if (yielding) ::fcntl(from_child[0], F_SETFL, O_NONBLOCK);
  std::vector<double> samples;
  samples.reserve(calls);
  std::string buf;
  for (int i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    writeAll(to_child[1], request);
    readLine(from_child[0], buf);
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  ::close(to_child[1]);
  ::close(from_child[0]);
  ::waitpid(pid, nullptr, 0);
  return statsOf(std::move(samples));
}

}  // namespace plugboard::bench

#endif  // PLUGBOARD_BENCH_PIPE_FLOOR_H_
