// fuzz/elf_manifest.cc: a plugin file as the catalog reads it, without loading it: the ELF
// section reader (core/manifests/elf_section.h) and the manifest parser
// (core/manifests/manifest.h).
//
// An input that starts with the ELF magic is a plugin file: its `.plugboard` section is
// read from a memory file and parsed. Any other input is a manifest's text, parsed
// directly, so that the fuzzer reaches the manifest's rules without building ELF headers.
// A parsed manifest must say what its JSON says, and survive its own normal form.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "core/manifests/elf_section.h"
#include "core/manifests/manifest.h"
#include "fuzz/support.h"

namespace {

using plugboard::core::Json;
using plugboard::core::Manifest;
using plugboard::core::parseManifest;

// The fuzzer's input as a file descriptor, as the catalog hands the reader one.
int memoryFile(std::string_view bytes) {
  static const int fd = ::memfd_create("plugin.so", MFD_CLOEXEC);
  FUZZ_CHECK(fd >= 0);
  FUZZ_CHECK(::ftruncate(fd, 0) == 0);
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n =
        ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    FUZZ_CHECK(n > 0);
    done += static_cast<std::size_t>(n);
  }
  return fd;
}

void checkManifest(std::string_view text) {
  auto parsed = parseManifest(text);
  if (!parsed) {
    FUZZ_CHECK(!parsed.error().message().empty());
    return;
  }
  const Manifest& m = *parsed;
  // The integers kept are the ones written: a value that does not fit is refused, never
  // read as another number (an ABI of 2^32 + 1 is not ABI 1).
  const Json j = Json::parse(m.text);
  FUZZ_CHECK(j["abi"] == m.abi);
  if (j.contains("priority")) FUZZ_CHECK(j["priority"] == m.priority);
  FUZZ_CHECK(plugboard::core::isValidPluginName(m.name));
  FUZZ_CHECK(plugboard::core::sameManifest(m, m));
  // The normal form is itself a valid manifest that says the same.
  const Json normal = m.toJson();
  auto again = parseManifest(normal.dump());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->toJson() == normal);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input = plugboard::fuzz::asText(data, size);
  if (!input.starts_with("\x7f"
                         "ELF")) {
    checkManifest(input);
    return 0;
  }
  auto section = plugboard::core::readElfSection(memoryFile(input), ".plugboard");
  if (!section) {
    FUZZ_CHECK(!section.error().message().empty());
    return 0;
  }
  FUZZ_CHECK(section->size() <= plugboard::core::kMaxSectionBytes);
  FUZZ_CHECK(section->size() <= size);
  checkManifest(*section);
  return 0;
}
