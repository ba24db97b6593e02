// deployers/python/embedded.h: the python deployer's embedded mode, built as a library of
// its own (libplugboard_python_embedded.so, linked with libpython) that python.so loads
// with global symbols the first time a step asks for mode "embedded". Process mode never
// loads it, so the python deployer works without libpython installed.
//
// Both sides are built together from this tree: the boundary is a C++ one.
#ifndef PLUGBOARD_DEPLOYERS_PYTHON_EMBEDDED_H_
#define PLUGBOARD_DEPLOYERS_PYTHON_EMBEDDED_H_

#include <string>

#include <plugboard/deployer.hpp>

namespace plugboard::python_deployer {

struct EmbeddedSpec {
  std::string module;     // import this module from `directory`, or
  std::string directory;  //
  std::string file;       // load this .py file
  std::string sdk;        // the directory holding plugboard_sdk
  std::string venv;       // empty: none; else its site-packages join sys.path
  std::string python;     // option 'python': must be the interpreter built in
  std::string label;      // "'pyhello'" or "/abs/file.py", for messages
  double cancel_grace_s = 2.0;
  plugboard::Logger log;  // the deployer's
};

// Starts the interpreter once per process, imports the plugin afresh and returns it with
// a handle that calls it on the caller's thread, in `out`. Throws std::runtime_error
// saying why.
using OpenEmbeddedFn = void (*)(const EmbeddedSpec& spec, plugboard::Deployed& out);

inline constexpr const char* kEmbeddedLibrary = "libplugboard_python_embedded.so";
inline constexpr const char* kOpenEmbeddedSymbol = "plugboard_python_open_embedded";

}  // namespace plugboard::python_deployer

#endif  // PLUGBOARD_DEPLOYERS_PYTHON_EMBEDDED_H_
