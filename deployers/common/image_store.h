// deployers/common/image_store.h: which image a name stands for in podman's local image
// store (containers-storage), read from the store's image list instead of asking podman,
// which takes 0.3-0.8 s a call on a loaded machine (docs/decisions.md, "Image IDs without
// podman"). Used where an image's identity keys a cache (the atp deployer's schema cache).
//
// The store is found as podman finds it (containers/storage, pkg/types/options.go): the
// file $CONTAINERS_STORAGE_CONF, else for root /etc/containers/storage.conf or
// /usr/share/containers/storage.conf, for other users $XDG_CONFIG_HOME (or ~/.config)
// /containers/storage.conf, else the system file's rootless_storage_path, else
// $XDG_DATA_HOME (or ~/.local/share)/containers/storage; its `driver` (or
// $STORAGE_DRIVER; when neither says, the one driver whose image list exists). The list
// is <graphroot>/<driver>-images/images.json, which containers-storage replaces whole
// (written aside, renamed) on every change: a name re-tagged to another image is seen at
// once, so a key made from it is never stale.
//
// Whatever the files cannot decide is kUnknown, for the caller to ask podman: a name
// podman would resolve itself (a short name without a registry, a digest reference, a
// transport such as oci-archive:), a podman other than the one in PATH, a remote podman
// ($CONTAINER_HOST, $CONTAINER_CONNECTION), additional or separate image stores
// (`additionalimagestores`, `imagestore`), a store or list that cannot be read or parsed. Free functions; thread-safe.
#ifndef PLUGBOARD_DEPLOYERS_COMMON_IMAGE_STORE_H_
#define PLUGBOARD_DEPLOYERS_COMMON_IMAGE_STORE_H_

#include <string>
#include <string_view>
#include <vector>

namespace plugboard::deployer_common {

struct StoredImage {
  enum class Answer {
    kFound,    // `id`: the image ID (64 hexadecimal digits), as `podman image inspect` gives
    kAbsent,   // the store has no image of that name (podman would fail to inspect it)
    kUnknown,  // the files cannot tell: ask podman (`why` says what stood in the way)
  };
  Answer answer = Answer::kUnknown;
  std::string id;
  std::string why;
};

// The names of the containers in the same store (<graphroot>/<driver>-containers/
// containers.json, which containers-storage also replaces whole); `known` false when the
// files cannot tell (as for images).
struct StoredContainers {
  bool known = false;
  std::vector<std::string> names;
};
StoredContainers storedContainerNames();

// `image` as a full reference in the store's names ("quay.io/a/b:1", "localhost/x:latest",
// "docker.io/library/alpine:latest"), or "" when only podman can resolve it (a short name,
// a digest reference, a transport).
std::string storeName(std::string_view image);

// The image `image` names in the local store of the user running this process.
// `podman_option`: the deployer's option 'podman' ("podman" unless set): anything else
// may be another podman with another store, and is kUnknown.
StoredImage findStoredImage(const std::string& image, const std::string& podman_option = "podman");

}  // namespace plugboard::deployer_common

#endif  // PLUGBOARD_DEPLOYERS_COMMON_IMAGE_STORE_H_
