// deployers/python/files.h: which files a Python plugin's start turns into code, checked
// with the runtime's trust rules (plugboard/host/trust.h) before the interpreter runs or
// imports anything: the interpreter, a virtual environment (its bin/python, pyvenv.cfg,
// site-packages and the .pth files there, which run at start-up), the SDK, and the plugin
// (a .py file, or a module or package in a directory) with the bytecode Python would read
// for it from __pycache__. The directory that goes on sys.path must be trusted too, since
// anyone who may write there may add a module the plugin imports.
//
// Free functions; thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_PYTHON_FILES_H_
#define PLUGBOARD_DEPLOYERS_PYTHON_FILES_H_

#include <string>

#include <plugboard/host/trust.h>

namespace plugboard::python_deployer {

struct PythonFiles {
  std::string python;     // the interpreter (empty: none is run)
  std::string venv;       // empty: none
  std::string sdk;        // the directory holding plugboard_sdk
  std::string module;     // a module imported from `directory` (or from sys.path), or
  std::string directory;  //
  std::string file;       // a .py file
};

// `path` (the artifact's file or directory) with every symbolic link resolved, after
// host::openTrusted() checked it and every directory and link on the way: the interpreter
// is given this path, in which no link is left and every directory is one only a trusted
// user may write, so what it opens is what was checked. Throws std::runtime_error "PATH:
// refused: <rule>; <fix>" when refused; a path that does not exist is returned as it is
// (made absolute), for the interpreter to report.
std::string resolvedPlugin(const std::string& path, const host::TrustRules& rules);

// Throws std::runtime_error "FILE: refused: <rule>; <fix>" for the first file refused.
// Files that do not exist are left to the interpreter to report.
void checkPythonFiles(const PythonFiles& files, const host::TrustRules& rules);

}  // namespace plugboard::python_deployer

#endif  // PLUGBOARD_DEPLOYERS_PYTHON_FILES_H_
