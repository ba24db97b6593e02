/* plugboard/abi.h: the binary boundary between the plugboard runtime and a plugin.
 *
 * This is the whole contract a plugin `.so` and the runtime share. It is plain C with no
 * dependency beyond the C standard library, so plugins and runtime may be built by
 * different compilers, standard libraries and C++ versions.
 *
 * A plugin exports one symbol, PLUGBOARD_ENTRY_ALIAS_NAME, as Boost.DLL's BOOST_DLL_ALIAS
 * writes it: a pointer to a function that returns the plugin's plugboard_plugin_api.
 * It also carries its manifest (compact UTF-8 JSON, NUL-terminated) in the ELF section
 * PLUGBOARD_MANIFEST_SECTION, so that the runtime can read it without loading the file.
 * `api->manifest` points at the same bytes; the runtime checks that both agree.
 *
 * Versioning: the runtime refuses a plugin whose abi_major differs from its own, or whose
 * abi_minor is higher than its own. Minor versions only append members, so struct_size
 * tells which members exist. Requests and results cross as UTF-8 JSON bytes. No C++ type
 * and no exception crosses this boundary.
 *
 * A deployer (manifest "kind":"deployer") is a `.so` of the same shape that exports
 * PLUGBOARD_DEPLOYER_ALIAS_NAME instead: a pointer to a function that returns its
 * plugboard_deployer_api. A deployer turns an artifact (a registry entry: a .so path, a
 * Python module, a container image ...) into a plugin handle whose execute and cancel
 * behave exactly like a plugin instance's.
 *
 * Threading: create and destroy are never called concurrently with any other call on the
 * same instance. execute may be called from several runtime threads at once on the same
 * instance unless the manifest says "concurrency":"serial". cancel may be called from any
 * thread while the execute call it names is running, or after it returned (then it is a
 * no-op).
 */
#ifndef PLUGBOARD_ABI_H_
#define PLUGBOARD_ABI_H_

#include <stddef.h>
#include <stdint.h>

#define PLUGBOARD_ABI_MAJOR 1
#define PLUGBOARD_ABI_MINOR 1

/* The ELF section that holds the manifest JSON. */
#define PLUGBOARD_MANIFEST_SECTION ".plugboard"

/* The exported alias. The symbol holds the address of a plugboard_entry_fn. */
#define PLUGBOARD_ENTRY_ALIAS plugboard_entry_v1
#define PLUGBOARD_ENTRY_ALIAS_NAME "plugboard_entry_v1"
#define PLUGBOARD_DEPLOYER_ALIAS plugboard_deployer_v1
#define PLUGBOARD_DEPLOYER_ALIAS_NAME "plugboard_deployer_v1"

#ifdef __cplusplus
extern "C" {
#endif

enum plugboard_log_level {
  PLUGBOARD_LOG_DEBUG = 0,
  PLUGBOARD_LOG_INFO = 1,
  PLUGBOARD_LOG_WARN = 2,
  PLUGBOARD_LOG_ERROR = 3
};

/* Receives JSON bytes from the other side.
 * OWNERSHIP: `json` belongs to the caller and is valid only during the call; the callee
 * copies what it keeps. `ctx` is passed back verbatim from whoever supplied the callback. */
typedef void (*plugboard_respond_fn)(void* ctx, const char* json, size_t len);

/* Services the runtime offers to a plugin instance.
 * OWNERSHIP: the runtime's. Valid from create until destroy returns; never free it. */
typedef struct plugboard_host {
  uint32_t struct_size; /* sizeof(plugboard_host) as the runtime was built */
  void* ctx;            /* OWNERSHIP: the runtime's; pass it back to log() unchanged */
  /* Forwards one log line to the runtime's log, tagged with the plugin's name.
   * OWNERSHIP: `message` is the plugin's; the runtime copies it. Thread-safe. */
  void (*log)(void* ctx, int level, const char* message, size_t len);
  /* Appended after ABI 1.1; present when struct_size holds it (check before use).
   * As log, for a line written during the call `call_id` (the id execute was given), from
   * any thread: the runtime keeps it with that call (a workflow step's logs). A deployer
   * whose plugin runs elsewhere (a child process) forwards its lines with this; a line
   * written through log on the thread running execute is tied to that call already. */
  void (*log_call)(void* ctx, uint64_t call_id, int level, const char* message, size_t len);
} plugboard_host;

typedef struct plugboard_plugin_api {
  uint32_t abi_major;   /* PLUGBOARD_ABI_MAJOR the plugin was built with */
  uint32_t abi_minor;   /* PLUGBOARD_ABI_MINOR the plugin was built with */
  uint32_t struct_size; /* sizeof(plugboard_plugin_api) as the plugin was built */

  /* OWNERSHIP: the plugin's, static; valid while the library is loaded. Compact JSON,
   * NUL-terminated, manifest_len bytes without the NUL. */
  const char* manifest;
  size_t manifest_len;

  /* Creates an instance from config_json (a JSON object; "{}" when there is none).
   * Returns the instance, or NULL after calling on_error(error_ctx, ...) once with a
   * result JSON of phase "Error" that says why.
   * OWNERSHIP: the instance is the plugin's; the runtime hands it back to destroy(). */
  void* (*create)(const plugboard_host* host, const char* config_json, size_t config_len,
                  plugboard_respond_fn on_error, void* error_ctx);

  /* Runs one call. `call_id` is unique per instance while the call runs; cancel() names
   * it. request_json is a JSON object (see docs/plugin-authoring.md). Before returning,
   * the plugin calls respond(respond_ctx, result_json, len) exactly once. */
  void (*execute)(void* instance, uint64_t call_id, const char* request_json,
                  size_t request_len, plugboard_respond_fn respond, void* respond_ctx);

  /* Asks the running call `call_id` to stop soon. It still responds, usually with an
   * Error or Failed result that says it was cancelled. */
  void (*cancel)(void* instance, uint64_t call_id);

  /* Destroys an instance. REQUIRES: no execute call on it is running. */
  void (*destroy)(void* instance);
} plugboard_plugin_api;

/* The function the exported alias points at.
 * OWNERSHIP: the returned struct is the plugin's, static; valid while loaded. */
typedef const plugboard_plugin_api* (*plugboard_entry_fn)(void);

/* A deployer. Its manifest lists the artifact kinds it deploys ("deploys") and describes
 * its configuration keys ("config"); see docs/deployers.md. */
typedef struct plugboard_deployer_api {
  uint32_t abi_major;   /* PLUGBOARD_ABI_MAJOR the deployer was built with */
  uint32_t abi_minor;   /* PLUGBOARD_ABI_MINOR the deployer was built with */
  uint32_t struct_size; /* sizeof(plugboard_deployer_api) as the deployer was built */

  /* OWNERSHIP: the deployer's, static; as plugboard_plugin_api.manifest. */
  const char* manifest;
  size_t manifest_len;

  /* Creates a deployer from config_json (a JSON object; "{}" when there is none). Returns
   * NULL after calling on_error(error_ctx, ...) once with a result JSON of phase "Error"
   * when it cannot work (a bad key, a tool it needs is missing ...).
   * OWNERSHIP: the deployer is the module's; the runtime hands it back to destroy(). */
  void* (*create)(const plugboard_host* host, const char* config_json, size_t config_len,
                  plugboard_respond_fn on_error, void* error_ctx);

  /* Starts the plugin `artifact_json` names (a JSON object, the registry's artifact with
   * "path" made absolute) with per-step `options_json` (a JSON object of the keys the
   * manifest's "config" describes). On success calls respond(respond_ctx, manifest) once
   * with the plugin's manifest object and returns the handle; on failure calls it once
   * with a result JSON of phase "Error" saying why and returns NULL.
   * OWNERSHIP: the handle is the module's; the runtime hands it back to close(). */
  void* (*open)(void* deployer, const char* artifact_json, size_t artifact_len,
                const char* options_json, size_t options_len, plugboard_respond_fn respond,
                void* respond_ctx);

  /* As plugboard_plugin_api.execute and .cancel, on a handle. */
  void (*execute)(void* handle, uint64_t call_id, const char* request_json,
                  size_t request_len, plugboard_respond_fn respond, void* respond_ctx);
  void (*cancel)(void* handle, uint64_t call_id);

  /* Stops the plugin and frees the handle. REQUIRES: no execute call on it is running. */
  void (*close)(void* handle);

  /* Destroys a deployer. REQUIRES: every handle it opened is closed. */
  void (*destroy)(void* deployer);

  /* ABI 1.1: the runtime uses these when struct_size holds them (else open, as 1.0). */

  /* As open, for the start `start_id` (unique among this deployer's starts under way),
   * which cancel_start may stop: the deployer then stops what it was starting, removes what
   * it made for it (processes, containers, files) and fails with an Error that says the
   * start was cancelled. */
  void* (*start)(void* deployer, uint64_t start_id, const char* artifact_json,
                 size_t artifact_len, const char* options_json, size_t options_len,
                 plugboard_respond_fn respond, void* respond_ctx);
  /* Asks start `start_id` to stop soon. The runtime calls it from any thread after it
   * called start with that id and before start returned (it may come before start has
   * begun to run). */
  void (*cancel_start)(void* deployer, uint64_t start_id);
  /* The runtime is about to exit without closing this deployer's handles (calls that
   * ignored their cancellation still run): remove at once what would outlive the process,
   * such as containers, child processes and files, and return. Called at most once; after
   * it only the calls and starts already under way may still call into the deployer. */
  void (*abandon)(void* deployer);
} plugboard_deployer_api;

typedef const plugboard_deployer_api* (*plugboard_deployer_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PLUGBOARD_ABI_H_ */
