// deployers/common/image_store.h: names as podman's store writes them, and an image's ID
// read from a store's image list as containers-storage writes it (Go's encoding/json:
// one line, escaped strings, names-history beside names), found through
// $CONTAINERS_STORAGE_CONF; what the files cannot decide is left to podman.
#include "deployers/common/image_store.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/files.h"

namespace plugboard::deployer_common {
namespace {

using testing::TempDir;
using Answer = StoredImage::Answer;

const std::string kA(64, 'a');
const std::string kB(64, 'b');

TEST(StoreNameTest, FullNamesAreNormalisedAsPodmanStoresThem) {
  EXPECT_EQ(storeName("quay.io/arcalot/x:0.5.1"), "quay.io/arcalot/x:0.5.1");
  EXPECT_EQ(storeName("localhost/plugboard-test/atp-fixture"),
            "localhost/plugboard-test/atp-fixture:latest");
  EXPECT_EQ(storeName("localhost:5000/a/b:1"), "localhost:5000/a/b:1");
  EXPECT_EQ(storeName("docker.io/alpine"), "docker.io/library/alpine:latest");
  EXPECT_EQ(storeName("index.docker.io/alpine:3"), "docker.io/library/alpine:3");
  // Only podman can say: short names, digests, transports, bad names.
  for (const char* name : {"alpine", "alpine:3", "library/alpine", "quay.io/x@sha256:abcd",
                           "oci-archive:/tmp/x.tar", "docker://quay.io/x:1", "Quay.io/x:1",
                           "quay.io/x:", ""}) {
    EXPECT_EQ(storeName(name), "") << name;
  }
}

class StoredImageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("CONTAINERS_STORAGE_CONF");
    if (old != nullptr) old_ = old;
    conf_ = dir_.write("storage.conf", "[storage]\ndriver = \"overlay\"\ngraphroot = \"" +
                                           dir_.path().string() + "\"\n");
    ::setenv("CONTAINERS_STORAGE_CONF", conf_.c_str(), 1);
    std::filesystem::create_directories(dir_ / "overlay-images");
  }
  void TearDown() override {
    if (old_.empty()) {
      ::unsetenv("CONTAINERS_STORAGE_CONF");
    } else {
      ::setenv("CONTAINERS_STORAGE_CONF", old_.c_str(), 1);
    }
  }
  void list(const std::string& json) { dir_.write("overlay-images/images.json", json); }

  TempDir dir_;
  std::string conf_, old_;
};

TEST_F(StoredImageTest, FindsTheImageANameIsOn) {
  // As Go writes it: the name in an escaped string and in another image's names-history
  // must not count; only `names` does.
  list(R"([{"id":")" + kA + R"(","digest":"sha256:1","names":["quay.io/x/y:2"],)"
       R"("names-history":["quay.io/x/y:1"],"metadata":"{\"n\":\"quay.io/x/y:1\",\"q\":\"\\\\\"}",)"
       R"("big-data-sizes":{"manifest":344},"created":"2026-12-01T15:32:00Z","flags":{"a":[1,2.5e3,true,null]}},)"
       R"({"id":")" + kB + R"(","names":["quay.io/x/y:1","localhost/z:latest"]}])");
  auto r = findStoredImage("quay.io/x/y:1");
  EXPECT_EQ(r.answer, Answer::kFound) << r.why;
  EXPECT_EQ(r.id, kB);
  r = findStoredImage("localhost/z");
  EXPECT_EQ(r.answer, Answer::kFound) << r.why;
  EXPECT_EQ(r.id, kB);
  r = findStoredImage("quay.io/x/y:2");
  EXPECT_EQ(r.answer, Answer::kFound) << r.why;
  EXPECT_EQ(r.id, kA);
  EXPECT_EQ(findStoredImage("quay.io/x/y:3").answer, Answer::kAbsent);
  // An empty store.
  list("[]");
  EXPECT_EQ(findStoredImage("quay.io/x/y:1").answer, Answer::kAbsent);
}

TEST_F(StoredImageTest, WhatTheFilesCannotSayIsLeftToPodman) {
  list(R"([{"id":")" + kA + R"(","names":["quay.io/x/y:1"]}])");
  EXPECT_EQ(findStoredImage("quay.io/x/y:1", "/opt/podman/bin/podman").answer, Answer::kUnknown);
  EXPECT_EQ(findStoredImage("y:1").answer, Answer::kUnknown);
  ::setenv("CONTAINER_HOST", "unix:///run/podman/podman.sock", 1);
  EXPECT_EQ(findStoredImage("quay.io/x/y:1").answer, Answer::kUnknown);
  ::unsetenv("CONTAINER_HOST");
  for (const char* bad : {"", "[", "[{\"id\":", "{}", "[{\"id\":\"" "abc\",\"names\":[\"quay.io/x/y:1\"]}]"}) {
    list(bad);
    const auto r = findStoredImage("quay.io/x/y:1");
    EXPECT_EQ(r.answer, Answer::kUnknown) << bad;
    EXPECT_NE(r.why, "") << bad;
  }
  std::filesystem::remove(dir_ / "overlay-images" / "images.json");
  EXPECT_EQ(findStoredImage("quay.io/x/y:1").answer, Answer::kUnknown);
  dir_.write("storage.conf", "[storage]\ngraphroot = \"" + dir_.path().string() +
                                 "\"\n[storage.options]\nadditionalimagestores = [\"/srv/images\"]\n");
  list(R"([{"id":")" + kA + R"(","names":["quay.io/x/y:1"]}])");
  EXPECT_EQ(findStoredImage("quay.io/x/y:1").answer, Answer::kUnknown);
  dir_.write("storage.conf", "[storage]\ngraphroot = \"" + dir_.path().string() +
                                 "\"\nimagestore = \"/srv/images\"\n");
  EXPECT_EQ(findStoredImage("quay.io/x/y:1").answer, Answer::kUnknown);
  dir_.write("storage.conf", "[storage\n");
  EXPECT_EQ(findStoredImage("quay.io/x/y:1").answer, Answer::kUnknown);
  // No driver configured: the one whose list exists.
  dir_.write("storage.conf", "[storage]\ngraphroot = \"" + dir_.path().string() + "\"\n");
  EXPECT_EQ(findStoredImage("quay.io/x/y:1").answer, Answer::kFound);
}

}  // namespace
}  // namespace plugboard::deployer_common
