// tests/support/completion.h: runs plugboard's completion scripts for bash, zsh and fish on
// a command line, for tests of the generated scripts (tools/plugboard/completion.cc).
#ifndef PLUGBOARD_TESTS_SUPPORT_COMPLETION_H_
#define PLUGBOARD_TESTS_SUPPORT_COMPLETION_H_

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/subprocess.h"

namespace plugboard::testing {

// The environment of a completion: `bin_dir` first in PATH, no plugin directories from
// the environment.
inline RunOptions completionEnv(const std::filesystem::path& bin_dir) {
  RunOptions options;
  const char* path = std::getenv("PATH");
  options.env = {"PATH=" + bin_dir.string() + ":" + (path ? path : "/usr/bin:/bin"),
                 "PLUGBOARD_PLUGINS=", "PLUGBOARD_DEPLOYERS="};
  return options;
}

// Runs bash's completion function `_plugboard` on the command line `words` (the last is
// the word being completed, "" for a new one) with the script `script` sourced and
// `bin_dir` first in PATH (where `plugboard` is looked up); its stdout holds COMPREPLY, one
// word a line.
inline RunResult complete(const std::filesystem::path& script, const std::filesystem::path& bin_dir,
                          const std::vector<std::string>& words) {
  std::vector<std::string> argv = {
      "bash", "-c",
      "source \"$1\" || exit 1; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "
      "_plugboard; printf '%s\\n' \"${COMPREPLY[@]}\"",
      "bash", script.string()};
  argv.insert(argv.end(), words.begin(), words.end());
  return run(argv, completionEnv(bin_dir));
}

// Runs zsh's completion function of `script` (its _plugboard, which the script calls as
// zsh's completion system would) on the command line `words` (the last is the word being
// completed). compadd and _files are stand-ins that print what they are given, one word a
// line, keeping the words that start with the one being completed as compadd does;
// _files prints "<files>" (or "<directories>" for -/).
inline RunResult completeZsh(const std::filesystem::path& script,
                             const std::filesystem::path& bin_dir,
                             const std::vector<std::string>& words) {
  std::vector<std::string> argv = {"zsh", "-f", "-c", R"zsh(
compadd() {
  local array="" ; local -a offered
  while (( $# )); do
    case $1 in
      -a) array=$2; shift 2 ;;
      -S | -P | -J | -X) shift 2 ;;
      --) shift; break ;;
      -*) shift ;;
      *) break ;;
    esac
  done
  if [[ -n $array ]]; then offered=("${(@P)array}"); else offered=("$@"); fi
  local word
  for word in "${offered[@]}"; do [[ $word == ${words[CURRENT]}* ]] && print -r -- "$word"; done
  return 0
}
_files() { [[ $1 == -/ ]] && print -- "<directories>" || print -- "<files>"; }
local script=$1
shift
words=("$@")
CURRENT=$#
source "$script"
)zsh", "zsh", script.string()};
  argv.insert(argv.end(), words.begin(), words.end());
  return run(argv, completionEnv(bin_dir));
}

// What fish offers for the command line `words` (the last is the word being completed)
// with the script `script` loaded: `complete -C`, one candidate a line, descriptions cut.
inline RunResult completeFish(const std::filesystem::path& script,
                              const std::filesystem::path& bin_dir,
                              const std::vector<std::string>& words) {
  std::vector<std::string> argv = {
      "fish", "--no-config", "-c",
      "source $argv[1]; or exit 1; complete -C (string join ' ' -- $argv[2..-1]) | "
      "string replace -r '\t.*' ''; true",
      script.string()};
  argv.insert(argv.end(), words.begin(), words.end());
  return run(argv, completionEnv(bin_dir));
}

// The non-empty lines of `text`.
inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_COMPLETION_H_
