// plugboard __docs DIR: the man pages and the bash completion script, written from the table
// of commands (commands.h) and each command's options, the same ones --help prints.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/runtime/exports.h"
#include "tools/plugboard/commands.h"

#ifndef PLUGBOARD_VERSION
#define PLUGBOARD_VERSION "unknown"
#endif

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

// One option as --help shows it.
struct Flag {
  std::string long_name;   // "--output"
  std::string short_name;  // "-o", or ""
  std::string parameter;   // "text|json (=text)", or "" for a flag without a value
  std::string value_name;  // "text|json", "FILE", "DIR", "arg", or ""
  std::string description;
};

std::vector<Flag> flags(const po::options_description& options) {
  std::vector<Flag> out;
  for (const auto& option : options.options()) {
    Flag flag;
    flag.long_name = "--" + option->long_name();
    const std::string name = option->format_name();  // "-o [ --output ]" or "--output"
    if (name.size() > 1 && name[0] == '-' && name[1] != '-') flag.short_name = name.substr(0, 2);
    if (option->semantic()->max_tokens() > 0) {
      flag.parameter = option->format_parameter();
      flag.value_name = flag.parameter.substr(0, flag.parameter.find(' '));
    }
    flag.description = option->description();
    out.push_back(std::move(flag));
  }
  return out;
}

std::vector<Flag> flags(const Command& command) {
  return flags(withCommonOptions(command.options().options));
}

// `text` escaped for roff: backslashes and hyphens, and no line starting a request.
std::string roff(std::string_view text) {
  std::string out;
  bool line_start = true;
  for (const char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

// "plugins list" -> "plugboard-plugins-list"
std::string pageName(const Command& command) {
  std::string name = "plugboard-" + std::string(command.name);
  std::replace(name.begin(), name.end(), ' ', '-');
  return name;
}

std::string header(const std::string& page, std::string_view summary) {
  return ".TH " + roff(upper(page)) +
         " 1 \"\" \"plugboard " PLUGBOARD_VERSION
         "\" \"plugboard manual\"\n.nh\n.ad l\n.SH NAME\n" +
         roff(page) + " \\- " + roff(summary) + "\n";
}

std::string manPage(const Command& command) {
  std::string summary(command.summary);
  summary[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(summary[0])));
  std::string page = header(pageName(command), command.summary);
  page += ".SH SYNOPSIS\n";
  for (const auto& form : usageForms(command)) {
    page += (page.ends_with(".SH SYNOPSIS\n") ? "" : ".br\n") +
            (".B plugboard " + roff(command.name)) + "\n" + roff(form) + "\n";
  }
  page += ".SH DESCRIPTION\n" + roff(summary) + ".\n";
  page += ".SH OPTIONS\n";
  for (const auto& flag : flags(command)) {
    page += ".TP\n";
    if (!flag.short_name.empty()) page += "\\fB" + roff(flag.short_name) + "\\fR, ";
    page += "\\fB" + roff(flag.long_name) + "\\fR";
    if (!flag.parameter.empty()) page += " \\fI" + roff(flag.parameter) + "\\fR";
    page += "\n" + roff(flag.description) + "\n";
  }
  page += ".SH SEE ALSO\n.BR plugboard (1)\n";
  return page;
}

std::string overviewPage() {
  std::string page = header("plugboard", "run workflow steps on executor plugins");
  page += ".SH SYNOPSIS\n.B plugboard\n\\fIcommand\\fR [\\fIoptions\\fR]\n";
  page +=
      ".SH DESCRIPTION\nplugboard hosts workflow executor plugins, routes workflow steps to "
      "them, and serves Argo's executor\\-plugin protocol.\n";
  page += ".SH COMMANDS\n";
  for (const auto& command : commands()) {
    page += ".TP\n\\fB" + roff(command.name) + "\\fR";
    if (!command.operand.empty()) page += " \\fI" + roff(command.operand) + "\\fR";
    page += "\n" + roff(command.summary) + "; see\n.BR " + roff(pageName(command)) + " (1).\n";
  }
  page +=
      ".SH ENVIRONMENT\n.TP\n.B PLUGBOARD_PLUGINS\nplugin directories (colon\\-separated) "
      "when neither \\fB\\-\\-plugins\\fR nor the configuration names any.\n"
      ".TP\n.B PLUGBOARD_DEPLOYERS\ndeployer module directories (colon\\-separated) when "
      "neither \\fB\\-\\-deployers\\fR nor the configuration names any.\n";
  page += ".SH FILES\n.TP\n.I <prefix>/" + roff(core::defaults::kSystemPluginDir) +
          "\nthe system plugin directory, used when no other plugin directory is given "
          "(\\fI/usr/lib/plugboard/plugins\\fR for the Debian package).\n"
          ".TP\n.I <prefix>/lib/plugboard/deployers\nthe deployer modules installed with "
          "plugboard.\n";
  page += ".SH SEE ALSO\n.BR plugboard\\-host (1)\n";
  return page;
}

// Joins what `pick` gives for each flag of `list` with `separator`.
template <typename Pick>
std::string joinFlags(const std::vector<Flag>& list, Pick pick, const char* separator) {
  std::string out;
  for (const auto& flag : list) {
    for (const std::string& name : pick(flag)) {
      if (name.empty()) continue;
      out += (out.empty() ? "" : separator) + name;
    }
  }
  return out;
}

// The completion of a command's operand of kind `kind` (not kNone).
std::string operandAction(Operand kind) {
  return kind == Operand::kPluginName ? "_plugboard_reply -W \"$(_plugboard_plugin_names)\""
                                      : "_plugboard_reply -f";
}

// The words a value name of choices stands for ("text json" for "text|json"), or "".
std::string choices(const std::string& value_name) {
  if (value_name.find('|') == std::string::npos) return "";
  std::string words = value_name;
  std::replace(words.begin(), words.end(), '|', ' ');
  return words;
}

// The name of the option `command`'s first operand fills, as "--name", or "".
std::string operandOption(const Command& command) {
  const CommandOptions own = command.options();
  return own.positional.max_total_count() > 0 ? "--" + own.positional.name_for_position(0) : "";
}

// The words the first operand of `command` may be ("plugin deployer" for a value name
// "plugin|deployer"), or "".
std::string operandWords(const Command& command) {
  const std::string option = operandOption(command);
  for (const auto& flag : flags(command)) {
    if (flag.long_name == option) return choices(flag.value_name);
  }
  return "";
}

// The case arms completing the value after an option of `command`.
std::string valueArms(const Command& command) {
  std::string arms;
  const std::string name(command.name);
  // The option the operand fills (--workflow for run's WORKFLOW) completes like the operand.
  const std::string operand = operandOption(command);
  for (const auto& flag : flags(command)) {
    std::string action;
    if (flag.long_name == operand && command.operand_kind != Operand::kNone) {
      action = operandAction(command.operand_kind);
    } else if (flag.value_name == "DIR") {
      action = "_plugboard_reply -d";
    } else if (flag.value_name == "FILE") {
      action = "_plugboard_reply -f";
    } else if (const auto words = choices(flag.value_name); !words.empty()) {
      action = "_plugboard_reply -W '" + words + "'";
    } else if (!flag.value_name.empty()) {
      action = "COMPREPLY=()";  // a value of its own kind: nothing to offer
    } else {
      continue;
    }
    std::string pattern = "\"" + name + " " + flag.long_name + "\"";
    if (!flag.short_name.empty()) pattern += "|\"" + name + " " + flag.short_name + "\"";
    arms += "    " + pattern + ")\n      " + action + "\n      return ;;\n";
  }
  return arms;
}

std::string completionScript() {
  std::ostringstream s;
  std::vector<std::string> firsts;  // the first words of the commands, once each
  std::string first_words;
  std::string second_words;  // the first words of two-word commands
  for (const auto& command : commands()) {
    const auto space = command.name.find(' ');
    const std::string first(command.name.substr(0, space));
    if (std::find(firsts.begin(), firsts.end(), first) == firsts.end()) {
      firsts.push_back(first);
      first_words += (first_words.empty() ? "" : " ") + first;
    }
    if (space != std::string_view::npos) second_words += " " + first;
  }
  s << R"sh(# bash completion for plugboard: commands, their flags, plugin names and files.
# Generated by `plugboard __docs` from the table of commands (tools/plugboard/commands.cc),
# the same options `plugboard <command> --help` prints; do not edit.

# _plugboard_reply -d|-f|-W WORDS: COMPREPLY from compgen for the word being completed.
_plugboard_reply() {
  case $1 in
    -d | -f) compopt -o filenames 2>/dev/null ;;
  esac
  mapfile -t COMPREPLY < <(compgen "$@" -- "$cur")
}

# The names of the plugins `plugboard plugins list --json` finds, with the --plugins and
# --config options of the command line being completed.
_plugboard_plugin_names() {
  local -a given=()
  local i word value
  for ((i = 2; i < ${#COMP_WORDS[@]}; i++)); do
    word=${COMP_WORDS[i]}
    case $word in
      --plugins | -p | --config)
        value=${COMP_WORDS[i + 1]}
        [[ $value == "=" ]] && value=${COMP_WORDS[i + 2]}
        value=${value/#\~/$HOME}
        [[ -n $value && $i -ne $COMP_CWORD ]] && given+=("$word" "$value")
        ;;
    esac
  done
  "${COMP_WORDS[0]}" plugins list --json "${given[@]}" 2>/dev/null |
    sed -n '/^  "plugins": \[/,/^  \]/s/^      "name": "\([^"]*\)".*/\1/p'
}

_plugboard() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  if [[ $cur == "=" ]]; then
    cur=""
  elif [[ $prev == "=" && $COMP_CWORD -ge 2 ]]; then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  fi
  if ((COMP_CWORD == 1)); then
    _plugboard_reply -W ")sh"
    << first_words << R"sh("
    return
  fi
  local command=${COMP_WORDS[1]}
  case " )sh"
    << second_words << R"sh( " in
    *" $command "*)
      if ((COMP_CWORD == 2)); then
        local -a seconds=()
)sh";
  for (const auto& command : commands()) {
    const auto space = command.name.find(' ');
    if (space == std::string_view::npos) continue;
    s << "        [[ $command == " << command.name.substr(0, space) << " ]] && seconds+=("
      << command.name.substr(space + 1) << ")\n";
  }
  s << R"sh(        _plugboard_reply -W "${seconds[*]}"
        return
      fi
      command+=" ${COMP_WORDS[2]}"
      ;;
  esac
  case "$command $prev" in
)sh";
  for (const auto& command : commands()) s << valueArms(command);
  s << R"sh(  esac
  local options="" operand="" operand_words=""
  case $command in
)sh";
  for (const auto& command : commands()) {
    const auto list = flags(command);
    const char* operand = command.operand_kind == Operand::kFile         ? "file"
                          : command.operand_kind == Operand::kPluginName ? "plugin"
                                                                         : "";
    s << "    \"" << command.name << "\")\n      options='"
      << joinFlags(
             list,
             [](const Flag& f) {
               return std::vector{f.long_name, f.short_name};
             },
             " ")
      << "'\n      operand=" << operand;
    // An operand that is one of some words (new's plugin|deployer) offers them after the
    // command's own words.
    const auto words = operandWords(command);
    if (!words.empty()) s << " operand_words='" << words << "'";
    s << " ;;\n";
  }
  s << R"sh(    *) return ;;
  esac
  if [[ $cur == -* ]]; then
    _plugboard_reply -W "$options"
  elif [[ $operand == file ]]; then
    )sh"
    << operandAction(Operand::kFile) << R"sh(
  elif [[ $operand == plugin ]]; then
    )sh"
    << operandAction(Operand::kPluginName) << R"sh(
  elif [[ -n $operand_words && $prev == "${command##* }" ]]; then
    _plugboard_reply -W "$operand_words"
  fi
}

complete -F _plugboard plugboard
)sh";
  return s.str();
}

core::Status writeFile(const std::filesystem::path& file, const std::string& text) {
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return core::Error("cannot write " + file.string(), core::Error::Code::kIo);
  return core::Status::Ok();
}

}  // namespace

int cmdDocs(const Args& args) {
  if (args.size() != 1) {
    std::cerr << "usage: plugboard __docs DIR\n";
    return kExitUsage;
  }
  const std::filesystem::path dir = args[0];
  std::vector<std::pair<std::filesystem::path, std::string>> files = {
      {dir / "man1" / "plugboard.1", overviewPage()},
      {dir / "completions" / "plugboard", completionScript()}};
  for (const auto& command : commands()) {
    files.emplace_back(dir / "man1" / (pageName(command) + ".1"), manPage(command));
  }
  for (const auto& [file, text] : files) {
    if (auto written = writeFile(file, text); !written) {
      std::cerr << "plugboard: " << written.error().message() << "\n";
      return kExitFailed;
    }
  }
  return kExitOk;
}

}  // namespace plugboard::cli
