#include "tools/plugboard/terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <mutex>

namespace plugboard::cli {
namespace {

struct Live {
  std::mutex mu;
  std::FILE* out = nullptr;  // set while a display is up
  std::vector<std::string> lines;  // as drawn (cut to the width)
};

Live& live() {
  static auto* l = new Live;  // never destroyed: the signal thread may print at exit
  return *l;
}

// Moves up over the `n` lines drawn and erases from there down.
void eraseLocked(std::FILE* out, std::size_t n) {
  if (n > 0) std::fprintf(out, "\x1b[%zuA", n);
  std::fputs("\r\x1b[J", out);
}

void writeLocked(std::FILE* out, const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text += "\r\x1b[2K" + line + "\n";
  text += "\x1b[J";  // what was below: more lines before, the terminal's ^C echo
  std::fputs(text.c_str(), out);
  std::fflush(out);
}

}  // namespace

std::size_t terminalColumns(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_col;
}

namespace {

std::size_t terminalRows(int fd) {
  winsize size{};
  if (ioctl(fd, TIOCGWINSZ, &size) != 0) return 0;
  return size.ws_row;
}

}  // namespace

std::size_t displayWidth(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b) {  // CSI: ESC [ parameters final byte
      if (i + 1 < text.size() && text[i + 1] == '[') {
        i += 2;
        while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7e)) ++i;
      }
      continue;
    }
    width += (c & 0xC0) != 0x80;
  }
  return width;
}

std::string fitLine(const std::string& line, std::size_t columns) {
  if (columns == 0 || displayWidth(line) <= columns) return line;
  std::string out;
  std::size_t width = 0;
  bool escapes = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    if (c == 0x1b && i + 1 < line.size() && line[i + 1] == '[') {
      std::size_t end = i + 2;
      while (end < line.size() && !(line[end] >= 0x40 && line[end] <= 0x7e)) ++end;
      out.append(line, i, end - i + 1);
      escapes = true;
      i = end;
      continue;
    }
    const bool starts = (c & 0xC0) != 0x80;
    if (starts && width + 1 >= columns) break;  // room for "…"
    width += starts;
    out += line[i];
  }
  out += "…";
  if (escapes) out += "\x1b[0m";
  return out;
}

void drawLive(std::FILE* out, const std::vector<std::string>& lines, bool final) {
  const std::size_t columns = terminalColumns(fileno(out));
  const std::size_t rows = terminalRows(fileno(out));
  std::size_t first = 0;
  // A row is left for the cursor below the lines.
  if (!final && rows > 1 && lines.size() > rows - 1) first = lines.size() - (rows - 1);
  std::vector<std::string> fitted;
  fitted.reserve(lines.size() - first);
  // One column short of the width: a line that fills the last column leaves some terminals
  // waiting to wrap, and the next line would start a row lower.
  for (std::size_t i = first; i < lines.size(); ++i)
    fitted.push_back(fitLine(lines[i], columns > 1 ? columns - 1 : 0));
  Live& l = live();
  std::lock_guard lock(l.mu);
  if (l.out != nullptr) {
    if (!l.lines.empty()) std::fprintf(out, "\x1b[%zuA", l.lines.size());
  }
  l.out = out;
  writeLocked(out, fitted);
  l.lines = std::move(fitted);
}

void endLive() {
  Live& l = live();
  std::lock_guard lock(l.mu);
  l.out = nullptr;
  l.lines.clear();
}

bool liveUp() {
  Live& l = live();
  std::lock_guard lock(l.mu);
  return l.out != nullptr;
}

void printAbove(std::string_view text) {
  Live& l = live();
  std::lock_guard lock(l.mu);
  if (l.out == nullptr) {
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
    return;
  }
  eraseLocked(l.out, l.lines.size());
  std::fflush(l.out);
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
  writeLocked(l.out, l.lines);
}

}  // namespace plugboard::cli
