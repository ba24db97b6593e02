// deployers/python/embedded.cc: the python deployer's embedded mode (see embedded.h and
// docs/deployers.md, "python"). One CPython interpreter per runtime process, started on
// the first embedded open and never finalized (C extensions cannot be unloaded, and
// threads a plugin started may still run). The Python side is plugboard_sdk/_embedded.py.
//
// Threads: the interpreter is started with the GIL released afterwards; every entry from
// the runtime (execute, cancel, close) takes it with PyGILState_Ensure, so any worker
// thread may call, and Python code releases it as usual while it blocks.
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <plugboard/deployer.hpp>

#include "deployers/python/embedded.h"

namespace plugboard::python_deployer {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kUnderAddressSanitizer = true;
#elif defined(__has_feature)
constexpr bool kUnderAddressSanitizer = __has_feature(address_sanitizer);
#else
constexpr bool kUnderAddressSanitizer = false;
#endif

class Gil {
 public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil&) = delete;
  Gil& operator=(const Gil&) = delete;

 private:
  PyGILState_STATE state_;
};

// "ValueError: text" of the Python error set, which it clears. REQUIRES: the GIL.
std::string takeError() {
  PyObject *type = nullptr, *value = nullptr, *trace = nullptr;
  PyErr_Fetch(&type, &value, &trace);
  PyErr_NormalizeException(&type, &value, &trace);
  std::string text = "unknown Python error";
  if (value != nullptr) {
    const bool runtime_error = PyErr_GivenExceptionMatches(type, PyExc_RuntimeError);
    if (PyObject* s = PyObject_Str(value); s != nullptr) {
      const char* utf8 = PyUnicode_AsUTF8(s);
      if (utf8 != nullptr) {
        // _embedded.py raises RuntimeError with whole sentences; others get their type.
        text = runtime_error ? utf8 : std::string(Py_TYPE(value)->tp_name) + ": " + utf8;
      }
      Py_DECREF(s);
    }
  }
  PyErr_Clear();
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(trace);
  return text;
}

// Where a plugin's log lines go: the deployer's logger while the handle lives, the
// runtime's stderr after (a thread the plugin started may outlive its handle).
struct LogSink {
  std::atomic<bool> alive{true};
  plugboard::Logger log;
};

void writeLog(LogSink& sink, std::string_view level, std::string_view text) {
  if (!sink.alive.load(std::memory_order_acquire)) {
    std::fprintf(stderr, "[%.*s] %.*s\n", static_cast<int>(level.size()), level.data(),
                 static_cast<int>(text.size()), text.data());
    return;
  }
  if (level == "debug") {
    sink.log.debug(text);
  } else if (level == "warn") {
    sink.log.warn(text);
  } else if (level == "error") {
    sink.log.error(text);
  } else {
    sink.log.info(text);
  }
}

constexpr const char* kSinkCapsule = "plugboard.LogSink";

// log(level, text), bound to one LogSink through its capsule.
PyObject* logFunction(PyObject* self, PyObject* args) {
  const char *level = nullptr, *text = nullptr;
  Py_ssize_t level_size = 0, text_size = 0;
  if (!PyArg_ParseTuple(args, "s#s#", &level, &level_size, &text, &text_size)) return nullptr;
  auto* sink = static_cast<std::shared_ptr<LogSink>*>(PyCapsule_GetPointer(self, kSinkCapsule));
  if (sink == nullptr) return nullptr;
  std::string level_copy(level, level_size), text_copy(text, text_size);
  Py_BEGIN_ALLOW_THREADS;
  writeLog(**sink, level_copy, text_copy);
  Py_END_ALLOW_THREADS;
  Py_RETURN_NONE;
}

PyMethodDef kLogDef = {"log", &logFunction, METH_VARARGS, "log(level, text): to the runtime's log"};

// A Python callable log(level, text) writing to `sink`. REQUIRES: the GIL.
PyObject* makeLogFunction(std::shared_ptr<LogSink> sink) {
  auto* owned = new std::shared_ptr<LogSink>(std::move(sink));
  PyObject* capsule = PyCapsule_New(owned, kSinkCapsule, [](PyObject* c) {
    delete static_cast<std::shared_ptr<LogSink>*>(PyCapsule_GetPointer(c, kSinkCapsule));
  });
  if (capsule == nullptr) {
    delete owned;
    return nullptr;
  }
  PyObject* fn = PyCFunction_NewEx(&kLogDef, capsule, nullptr);
  Py_DECREF(capsule);
  return fn;
}

// interrupt(thread_id, exception_type_or_None): raises (or, with None, withdraws) an
// asynchronous exception in a thread that runs Python code.
PyObject* interruptFunction(PyObject*, PyObject* args) {
  unsigned long thread_id = 0;
  PyObject* exception = nullptr;
  if (!PyArg_ParseTuple(args, "kO", &thread_id, &exception)) return nullptr;
  PyThreadState_SetAsyncExc(thread_id, exception == Py_None ? nullptr : exception);
  Py_RETURN_NONE;
}

PyMethodDef kModuleMethods[] = {
    {"interrupt", &interruptFunction, METH_VARARGS,
     "interrupt(thread_id, exc): raise exc in the thread (None withdraws it)"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef kModule = {PyModuleDef_HEAD_INIT,
                       "_plugboard_embedded",
                       "The runtime's side of plugboard_sdk._embedded",
                       -1,
                       kModuleMethods,
                       nullptr,
                       nullptr,
                       nullptr,
                       nullptr};

// ---------------------------------------------------------------------------------------
// The interpreter, once per process.

struct Interpreter {
  std::mutex mu;
  bool started = false;
  std::string failure;           // why it could not start; sticks
  std::string sdk;               // the plugboard_sdk directory it uses
  PyObject* embedded = nullptr;  // plugboard_sdk._embedded, owned
};

Interpreter& interpreter() {
  static auto* it = new Interpreter();  // never destroyed: the interpreter outlives statics
  return *it;
}

// REQUIRES: the GIL.
void setUpModules(Interpreter& in, const EmbeddedSpec& spec) {
  PyObject* module = PyModule_Create(&kModule);
  if (module == nullptr ||
      PyDict_SetItemString(PyImport_GetModuleDict(), "_plugboard_embedded", module) != 0) {
    Py_XDECREF(module);
    throw std::runtime_error("cannot create module _plugboard_embedded: " + takeError());
  }
  Py_DECREF(module);
  PyObject* path = PySys_GetObject("path");  // borrowed
  PyObject* sdk = PyUnicode_FromString(spec.sdk.c_str());
  if (path == nullptr || sdk == nullptr || PyList_Insert(path, 0, sdk) != 0) {
    Py_XDECREF(sdk);
    throw std::runtime_error("cannot put the SDK on sys.path: " + takeError());
  }
  Py_DECREF(sdk);
  in.embedded = PyImport_ImportModule("plugboard_sdk._embedded");
  if (in.embedded == nullptr) {
    throw std::runtime_error("cannot import plugboard_sdk._embedded from " + spec.sdk + ": " +
                             takeError());
  }
  auto sink = std::make_shared<LogSink>();
  sink->log = spec.log;
  sink->alive = false;  // the first deployer may go away: lines outside calls go to stderr
  PyObject* fallback = makeLogFunction(std::move(sink));
  PyObject* done =
      fallback == nullptr ? nullptr : PyObject_CallMethod(in.embedded, "set_up", "O", fallback);
  Py_XDECREF(fallback);
  if (done == nullptr) throw std::runtime_error("cannot set up the interpreter: " + takeError());
  Py_DECREF(done);
}

// Starts the interpreter on first use. Throws std::runtime_error.
Interpreter& start(const EmbeddedSpec& spec) {
  Interpreter& in = interpreter();
  std::lock_guard lock(in.mu);
  if (!in.failure.empty()) throw std::runtime_error(in.failure);
  if (in.started) {
    if (in.sdk != spec.sdk) {
      throw std::runtime_error("the embedded interpreter already uses the Python SDK in '" +
                               in.sdk + "', not '" + spec.sdk +
                               "' (option 'sdk_path' cannot differ between embedded plugins)");
    }
    return in;
  }
  try {
    if (Py_IsInitialized()) {  // someone else in this process started one: share it
      Gil gil;
      setUpModules(in, spec);
    } else {
      if (kUnderAddressSanitizer) {
        // CPython's own allocator keeps objects in arenas LeakSanitizer does not scan, so
        // what plugboard hands to the interpreter would look leaked at exit: allocate with
        // malloc, where LeakSanitizer sees it.
        PyPreConfig pre;
        PyPreConfig_InitIsolatedConfig(&pre);
        pre.allocator = PYMEM_ALLOCATOR_MALLOC;
        if (PyStatus status = Py_PreInitialize(&pre); PyStatus_Exception(status)) {
          throw std::runtime_error(std::string("cannot start the embedded Python interpreter: ") +
                                   (status.err_msg != nullptr ? status.err_msg : "unknown error"));
        }
      }
      PyConfig config;
      PyConfig_InitIsolatedConfig(&config);  // no PYTHON* variables, no user site
      config.install_signal_handlers = 0;    // signals stay the runtime's
      config.site_import = 1;                // the system's dist-packages
      config.parse_argv = 0;
      PyStatus status = PyConfig_SetBytesString(&config, &config.home, PLUGBOARD_PYTHON_HOME);
      if (!PyStatus_Exception(status) && std::filesystem::exists(PLUGBOARD_PYTHON_EXECUTABLE)) {
        status =
            PyConfig_SetBytesString(&config, &config.program_name, PLUGBOARD_PYTHON_EXECUTABLE);
      }
      if (!PyStatus_Exception(status)) status = Py_InitializeFromConfig(&config);
      PyConfig_Clear(&config);
      if (PyStatus_Exception(status)) {
        throw std::runtime_error(std::string("cannot start the embedded Python interpreter: ") +
                                 (status.err_msg != nullptr ? status.err_msg : "unknown error"));
      }
      try {
        setUpModules(in, spec);
      } catch (...) {
        PyEval_SaveThread();
        throw;
      }
      PyEval_SaveThread();  // from now on every entry takes the GIL itself
    }
  } catch (const std::exception& e) {
    in.failure = e.what();
    throw;
  }
  in.sdk = spec.sdk;
  in.started = true;
  return in;
}

// Embedded mode runs the libpython it was built with; option 'python' may only name that
// interpreter (the default, /usr/bin/python3, does on Debian).
void checkInterpreter(const std::string& python) {
  namespace fs = std::filesystem;
  std::error_code ec, ec2;
  const fs::path wanted = fs::canonical(python, ec);
  const fs::path built_in = fs::canonical(PLUGBOARD_PYTHON_EXECUTABLE, ec2);
  if (ec) {
    throw std::runtime_error("cannot use the interpreter " + python + ": " + ec.message() +
                             " (mode 'embedded' runs the built-in " PLUGBOARD_PYTHON_EXECUTABLE
                             "; option 'python' may only name that one)");
  }
  if (!ec2 && wanted != built_in) {
    throw std::runtime_error("mode 'embedded' runs the built-in " PLUGBOARD_PYTHON_EXECUTABLE
                             ", not " +
                             python + "; use mode 'process' for another interpreter");
  }
}

// ---------------------------------------------------------------------------------------
// The handle.

class EmbeddedHandle : public plugboard::Handle {
 public:
  // REQUIRES: the GIL.
  EmbeddedHandle(PyObject* loaded, std::shared_ptr<LogSink> sink, std::string who)
      : loaded_(loaded),
        execute_(PyObject_GetAttrString(loaded, "execute")),
        sink_(std::move(sink)),
        who_(std::move(who)) {
    if (execute_ == nullptr) {
      Py_DECREF(loaded_);
      throw std::runtime_error(who_ + ": " + takeError());
    }
  }

  ~EmbeddedHandle() override {
    sink_->alive.store(false, std::memory_order_release);
    Gil gil;
    if (PyObject* r = PyObject_CallMethod(loaded_, "close", nullptr); r != nullptr) {
      Py_DECREF(r);
    } else {
      PyErr_Clear();
    }
    Py_DECREF(execute_);
    Py_DECREF(loaded_);
  }

  std::string execute(std::uint64_t call_id, std::string_view request) override {
    Gil gil;
    PyObject* args[2] = {
        PyLong_FromUnsignedLongLong(call_id),
        PyUnicode_FromStringAndSize(request.data(), static_cast<Py_ssize_t>(request.size()))};
    PyObject* r = args[0] != nullptr && args[1] != nullptr
                      ? PyObject_Vectorcall(execute_, args, 2, nullptr)
                      : nullptr;
    Py_XDECREF(args[0]);
    Py_XDECREF(args[1]);
    if (r == nullptr) return Result::Error(who_ + ": " + takeError()).toText();
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(r, &size);
    std::string result = text != nullptr ? std::string(text, size)
                                         : Result::Error(who_ + ": " + takeError()).toText();
    Py_DECREF(r);
    return result;
  }

  void cancel(std::uint64_t call_id) override {
    Gil gil;
    PyObject* r =
        PyObject_CallMethod(loaded_, "cancel", "K", static_cast<unsigned long long>(call_id));
    if (r != nullptr) {
      Py_DECREF(r);
    } else {
      sink_->log.warn(who_ + ": cancel failed: " + takeError());
    }
  }

 private:
  PyObject* const loaded_;   // plugboard_sdk._embedded.Loaded, owned; used with the GIL
  PyObject* const execute_;  // its bound method execute, owned
  const std::shared_ptr<LogSink> sink_;
  const std::string who_;
};

}  // namespace
}  // namespace plugboard::python_deployer

extern "C" __attribute__((visibility("default"))) void plugboard_python_open_embedded(
    const plugboard::python_deployer::EmbeddedSpec& spec, plugboard::Deployed& out) {
  using namespace plugboard::python_deployer;
  if (!spec.python.empty()) checkInterpreter(spec.python);
  Interpreter& in = start(spec);
  auto sink = std::make_shared<LogSink>();
  sink->log = spec.log;
  Gil gil;
  PyObject* log = makeLogFunction(sink);
  PyObject* loaded =
      log == nullptr
          ? nullptr
          : PyObject_CallMethod(in.embedded, "load", "ssssOds", spec.module.c_str(),
                                spec.directory.c_str(), spec.file.c_str(), spec.venv.c_str(), log,
                                spec.cancel_grace_s, spec.label.c_str());
  Py_XDECREF(log);
  if (loaded == nullptr) throw std::runtime_error(takeError());
  PyObject* manifest = PyObject_CallMethod(loaded, "manifest", nullptr);
  const char* text = manifest != nullptr ? PyUnicode_AsUTF8(manifest) : nullptr;
  if (text == nullptr) {
    Py_XDECREF(manifest);
    Py_DECREF(loaded);
    throw std::runtime_error(spec.label + ": cannot read the plugin's manifest: " + takeError());
  }
  out.manifest = plugboard::Json::parse(text);
  Py_DECREF(manifest);
  const std::string name = out.manifest.value("name", std::string());
  out.handle = std::make_unique<EmbeddedHandle>(loaded, std::move(sink),
                                                "plugin '" + name + "' (python, embedded)");
}
