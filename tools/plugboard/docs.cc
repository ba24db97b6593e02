// plugboard __docs DIR [--doc-dir DOCDIR]: the man pages and the completion scripts
// (completion.h), written from the table of commands (commands.h) and each command's options,
// the same ones --help prints. --help cites the documentation as the source tree has it
// ("docs/configuration.md"); with --doc-dir, the man pages cite it where it is installed
// (DOCDIR/docs/configuration.md): the install step writes them so, with the prefix it
// installs to.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/runtime/exports.h"
#include "tools/plugboard/commands.h"
#include "tools/plugboard/completion.h"

#ifndef PLUGBOARD_VERSION
#define PLUGBOARD_VERSION "unknown"
#endif

namespace plugboard::cli {
namespace po = boost::program_options;

namespace {

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

// `text` with each "docs/..." it cites made "<doc_dir>/docs/..." when doc_dir is not empty.
std::string cite(std::string text, const std::string& doc_dir) {
  if (doc_dir.empty()) return text;
  const std::string installed = doc_dir + "/docs/";
  for (auto at = text.find("docs/"); at != std::string::npos; at = text.find("docs/", at)) {
    const bool starts_word =
        at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) ||
                     text[at - 1] == '/' || text[at - 1] == '-' || text[at - 1] == '_');
    if (!starts_word) {
      at += 5;
      continue;
    }
    text.replace(at, 5, installed);
    at += installed.size();
  }
  return text;
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

std::string manPage(const Command& command, const std::string& doc_dir) {
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
    page += "\n" + roff(cite(flag.description, doc_dir)) + "\n";
  }
  page += ".SH SEE ALSO\n.BR plugboard (1)\n";
  return page;
}

std::string overviewPage(const std::string& doc_dir) {
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
  if (!doc_dir.empty()) {
    page += ".TP\n.I " + roff(doc_dir) +
            "\nthe documentation (\\fIREADME.md\\fR and \\fIdocs\\fR), the example workflows "
            "(\\fIexamples\\fR) and the plugins' sources with the example Python, Arcaflow "
            "and Argo plugins they use (\\fIplugins\\fR).\n"
            ".TP\n.I /etc/plugboard/plugboard.toml\nthe configuration of the Debian "
            "package's service, plugboard.service (\\fBplugboard serve \\-\\-config\\fR "
            "\\fI/etc/plugboard/plugboard.toml\\fR).\n";
  }
  page += ".SH SEE ALSO\n.BR plugboard\\-host (1)\n";
  return page;
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
  std::string doc_dir;
  std::vector<std::string> operands;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--doc-dir" && i + 1 < args.size()) {
      doc_dir = args[++i];
    } else {
      operands.push_back(args[i]);
    }
  }
  if (operands.size() != 1) {
    std::cerr << "usage: plugboard __docs DIR [--doc-dir DOCDIR]\n";
    return kExitUsage;
  }
  const std::filesystem::path dir = operands[0];
  std::vector<std::pair<std::filesystem::path, std::string>> files = {
      {dir / "man1" / "plugboard.1", overviewPage(doc_dir)},
      {dir / "completions" / "plugboard", bashCompletion()},
      {dir / "completions" / "_plugboard", zshCompletion()},
      {dir / "completions" / "plugboard.fish", fishCompletion()}};
  for (const auto& command : commands()) {
    files.emplace_back(dir / "man1" / (pageName(command) + ".1"), manPage(command, doc_dir));
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
