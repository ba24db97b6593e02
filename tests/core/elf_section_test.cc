#include "core/manifests/elf_section.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

using plugboard::testing::fixture;
using plugboard::testing::plugin;
using plugboard::testing::TempDir;

TEST(ElfSectionTest, ReadsTheManifestSection) {
  auto bytes = readElfSection(plugin("hello"), ".plugboard");
  ASSERT_TRUE(bytes.ok()) << bytes.error().message();
  EXPECT_NE(bytes->find(R"("name":"hello")"), std::string::npos);
}

TEST(ElfSectionTest, NotFoundWhenTheSectionIsAbsent) {
  auto bytes = readElfSection(fixture("no_manifest"), ".plugboard");
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.error().code(), Error::Code::kNotFound);
}

TEST(ElfSectionTest, RefusesAFileThatIsNotElf) {
  TempDir dir;
  plugboard::testing::writeFile(dir / "x.so", "#!/bin/sh\necho I am not a library\n");
  auto bytes = readElfSection(dir / "x.so", ".plugboard");
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.error().message().find("not an ELF file"), std::string::npos);
}

TEST(ElfSectionTest, RefusesATruncatedFileAtEveryLength) {
  TempDir dir;
  const std::string whole = plugboard::testing::readFile(plugin("hello"));
  // Cut the file at many lengths; none may crash, all but the whole file must fail.
  for (std::size_t len : {std::size_t{0}, std::size_t{3}, std::size_t{20}, std::size_t{63},
                          std::size_t{64}, std::size_t{4096}, whole.size() / 2, whole.size() - 1}) {
    plugboard::testing::writeFile(dir / "t.so", std::string_view(whole).substr(0, len));
    auto bytes = readElfSection(dir / "t.so", ".plugboard");
    EXPECT_FALSE(bytes.ok()) << "length " << len;
  }
}

TEST(ElfSectionTest, ReportsAFileThatCannotBeOpened) {
  TempDir dir;
  std::filesystem::create_symlink(dir / "gone.so", dir / "dangling.so");
  auto bytes = readElfSection(dir / "dangling.so", ".plugboard");
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.error().code(), Error::Code::kIo);
  EXPECT_NE(bytes.error().message().find("cannot open"), std::string::npos);
}

TEST(ElfSectionTest, ReportsAFileWithoutReadPermission) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  TempDir dir;
  std::filesystem::copy_file(plugin("hello"), dir / "locked.so");
  std::filesystem::permissions(dir / "locked.so", std::filesystem::perms::none);
  auto bytes = readElfSection(dir / "locked.so", ".plugboard");
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.error().message().find("Permission denied"), std::string::npos);
}

}  // namespace
}  // namespace plugboard::core
