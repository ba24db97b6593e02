// deployers/atp/schema_cache.h: the schemas Arcaflow plugins sent in their hello, kept on
// disk by artifact digest, so that reading one (which needs the plugin started) happens
// once per artifact content, across runs (docs/arcaflow.md, "The schema cache").
//
// A digest is the SHA-256 of what the artifact runs: the plugin's files (a .py file, or
// every file of a module's directory), the program of a command, a container image's ID,
// together with the interpreter and the arguments. A changed file is another digest; an
// entry is never updated in place. Files are written whole and renamed into place, so
// concurrent runtimes never read half an entry. Free functions; thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_ATP_SCHEMA_CACHE_H_
#define PLUGBOARD_DEPLOYERS_ATP_SCHEMA_CACHE_H_

#include <optional>
#include <string>
#include <vector>

#include <plugboard/host/sha256.h>
#include <plugboard/sdk.hpp>

namespace plugboard::atp_deployer {

// The default cache directory: $XDG_CACHE_HOME/plugboard/atp, else
// $HOME/.cache/plugboard/atp; empty when neither variable is set.
std::string defaultCacheDir();

// Hashes what identifies an artifact's content. Not thread-safe: one per digest.
class Digest {
 public:
  void addText(const std::string& text);
  // The file's content (and its name); false when it cannot be read.
  bool addFile(const std::string& path);
  // Every regular file under `dir`, in name order, with its path relative to `dir`.
  bool addTree(const std::string& dir);
  std::string hex();

 private:
  host::Sha256 sha_;
};

// The schema cached under `digest` in `dir`; nullopt when there is none (or it is damaged).
std::optional<Json> loadSchema(const std::string& dir, const std::string& digest);

// Stores `schema` under `digest` in `dir`, creating the directory. False if it could not.
bool storeSchema(const std::string& dir, const std::string& digest, const Json& schema);

}  // namespace plugboard::atp_deployer

#endif  // PLUGBOARD_DEPLOYERS_ATP_SCHEMA_CACHE_H_
