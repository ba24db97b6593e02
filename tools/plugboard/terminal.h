// tools/plugboard/terminal.h: the terminal while `plugboard run` draws on it live.
//
// A live display (progress.h, node_tree.h) redraws its lines in place: it moves the cursor
// up over the lines it drew and writes them again. That holds only while every line it drew
// is one row and nothing else writes below it. So the lines are cut to the terminal's width
// (fitLine), one drawer (drawLive) keeps what is on the screen, and whatever else prints
// while a live display is up (the Ctrl-C message, log lines on standard error) goes through
// printAbove(): the live lines are erased, the text printed, the lines drawn again below
// it. The terminal's own echo of ^C (at the cursor, below the lines) is erased by the next
// drawing. Thread-safe: the signal thread and log lines of plugin threads print while the
// engine's thread draws.
#ifndef PLUGBOARD_TOOLS_TERMINAL_H_
#define PLUGBOARD_TOOLS_TERMINAL_H_

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace plugboard::cli {

// The columns of the terminal on `fd`; 0 when it is not one or does not say.
std::size_t terminalColumns(int fd);

// Display columns of `text`: escape sequences take none, a UTF-8 sequence one.
std::size_t displayWidth(std::string_view text);

// `line` cut to at most `columns` display columns ("…" marks the cut, and colours are
// reset after it); 0 columns: unchanged.
std::string fitLine(const std::string& line, std::size_t columns);

// Draws `lines` on `out` (a terminal) in place of the lines drawn before, each cut to the
// terminal's width and, unless `final`, only the last that fit its height (the cursor
// cannot move up past the screen's top); later calls replace them. Ends with the cursor
// below them.
void drawLive(std::FILE* out, const std::vector<std::string>& lines, bool final = false);
// The live lines stay as drawn and are no longer redrawn: what prints next goes below them.
void endLive();

// Whether a live display is up.
bool liveUp();
// `text` (whole lines) on standard error, above the live lines when a display is up.
void printAbove(std::string_view text);

}  // namespace plugboard::cli

#endif  // PLUGBOARD_TOOLS_TERMINAL_H_
