// tests/support/pty.h: a program run on a pseudo-terminal of a given size, keys typed into
// it, and what it drew read back as a screen, for tests of what a user sees in a terminal.
//
// runInPty() starts the program as the session leader of a new terminal (its standard
// input, output and error), types each Key once the output holds its `when` text (a key
// such as "\x03" is Ctrl-C: the terminal sends SIGINT to the program and echoes "^C", as a
// user's terminal does), and reads until the program ends. Screen replays the bytes as a
// VT100-like terminal does: printable text (UTF-8 sequences one column), wrapping at the
// width, CR, LF, cursor up (CSI A), previous line (CSI F), erase in line (CSI K) and in
// display (CSI J); colours and other SGR codes are ignored, any other sequence fails the
// test. Rows scrolled off the top stay (a scrollback) but the cursor cannot reach them.
#ifndef PLUGBOARD_TESTS_SUPPORT_PTY_H_
#define PLUGBOARD_TESTS_SUPPORT_PTY_H_

#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace plugboard::testing {

struct Key {
  std::string when;   // typed once the output holds this (after the previous key's)
  std::string bytes;  // what is typed
};

struct PtyResult {
  int exit_code = -1;
  std::string output;  // every byte the program wrote to the terminal
};

inline PtyResult runInPty(const std::vector<std::string>& argv, std::vector<Key> keys,
                          unsigned short columns = 80, unsigned short rows = 24) {
  PtyResult result;
  winsize size{};
  size.ws_col = columns;
  size.ws_row = rows;
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, &size);
  if (pid < 0) {
    ADD_FAILURE() << "forkpty failed";
    return result;
  }
  if (pid == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  std::size_t next = 0, searched = 0;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    if (std::chrono::steady_clock::now() > give_up) {
      ADD_FAILURE() << "the program did not end within 60s; it wrote:\n" << result.output;
      kill(pid, SIGKILL);
      break;
    }
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(master, buf, sizeof buf);
    if (n <= 0) break;  // EIO once the program and its children closed the terminal
    result.output.append(buf, static_cast<std::size_t>(n));
    if (next < keys.size()) {
      const auto at = result.output.find(keys[next].when, searched);
      if (at != std::string::npos) {
        searched = at + keys[next].when.size();
        const std::string& bytes = keys[next].bytes;
        EXPECT_EQ(write(master, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
        ++next;
      }
    }
  }
  close(master);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  EXPECT_EQ(next, keys.size()) << "not every key was typed; the program wrote:\n"
                               << result.output;
  return result;
}

class Screen {
 public:
  Screen(const std::string& bytes, std::size_t columns, std::size_t rows = 24)
      : columns_(columns), screen_rows_(rows) {
    rows_.emplace_back();
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      const auto c = static_cast<unsigned char>(bytes[i]);
      if (c == '\r') {
        col_ = 0;
      } else if (c == '\n') {
        down();
      } else if (c == '\b') {
        if (col_ > 0) --col_;
      } else if (c == 0x1b) {
        i = escape(bytes, i);
      } else if (c >= 0x20 || c >= 0x80) {
        std::size_t len = 1;
        if (c >= 0xF0) len = 4;
        else if (c >= 0xE0) len = 3;
        else if (c >= 0xC0) len = 2;
        put(bytes.substr(i, len));
        i += len - 1;
      }
    }
  }

  // The rows as shown, trailing blanks removed, trailing empty rows dropped.
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const auto& row : rows_) {
      std::string line;
      for (const auto& cell : row) line += cell.empty() ? " " : cell;
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out.push_back(line);
    }
    while (!out.empty() && out.back().empty()) out.pop_back();
    return out;
  }
  std::string text() const {
    std::string out;
    for (const auto& l : lines()) out += l + "\n";
    return out;
  }

 private:
  void down() {
    ++row_;
    if (row_ == rows_.size()) rows_.emplace_back();
  }
  void put(const std::string& glyph) {
    if (col_ >= columns_) {  // the pending wrap
      col_ = 0;
      down();
    }
    auto& row = rows_[row_];
    if (row.size() <= col_) row.resize(col_ + 1);
    row[col_++] = glyph;
  }
  std::size_t escape(const std::string& bytes, std::size_t i) {
    if (i + 1 >= bytes.size() || bytes[i + 1] != '[') {
      ADD_FAILURE() << "an escape that is not CSI at byte " << i;
      return i;
    }
    std::size_t end = i + 2;
    while (end < bytes.size() && !(bytes[end] >= 0x40 && bytes[end] <= 0x7e)) ++end;
    if (end >= bytes.size()) return end;
    const std::string params = bytes.substr(i + 2, end - i - 2);
    const int n = params.empty() ? 0 : std::atoi(params.c_str());
    switch (bytes[end]) {
      case 'm':
        break;
      case 'A':
      case 'F': {
        // The cursor stops at the screen's top row: what scrolled off is out of reach.
        const std::size_t up = n == 0 ? 1 : static_cast<std::size_t>(n);
        const std::size_t top = rows_.size() > screen_rows_ ? rows_.size() - screen_rows_ : 0;
        row_ = row_ >= top + up ? row_ - up : top;
        if (bytes[end] == 'F') col_ = 0;
        break;
      }
      case 'K': {
        auto& row = rows_[row_];
        if (n == 2) {
          row.clear();
        } else if (n == 0 && row.size() > col_) {
          row.resize(col_);
        }
        break;
      }
      case 'J':
        if (n == 0) {
          if (rows_[row_].size() > col_) rows_[row_].resize(col_);
          for (std::size_t r = row_ + 1; r < rows_.size(); ++r) rows_[r].clear();
        } else {
          ADD_FAILURE() << "erase in display " << n;
        }
        break;
      default:
        ADD_FAILURE() << "an escape sequence the screen does not know: " << params << bytes[end];
    }
    return end;
  }

  std::size_t columns_;
  std::size_t screen_rows_;
  std::vector<std::vector<std::string>> rows_;
  std::size_t row_ = 0, col_ = 0;
};

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_PTY_H_
