#!/usr/bin/env bash
# The image of the argo deployer's test sidecar (a CTest fixture: tests/CMakeLists.txt):
# this machine's python3 and its standard library, and tests/support/argo_sidecar/server.py,
# made without any image registry (tools/lib/rootfs.sh).
#   tests/support/make_argo_sidecar_image.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/lib/rootfs.sh
. "$here/../../tools/lib/rootfs.sh"
python=$(readlink -f /usr/bin/python3)  # the Debian package's, whatever PATH holds
stdlib=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
rootfs=$(rootfs_new)
trap 'rootfs_cleanup "$rootfs"' EXIT
rootfs_install "$rootfs" 0755 "$python" /usr/bin/python3
install -d -m 0755 "$rootfs$stdlib"
tar -C "$stdlib" --exclude=test --exclude=__pycache__ --exclude=site-packages \
  --exclude=dist-packages --exclude=idlelib --exclude=tkinter --exclude=ensurepip \
  --exclude=lib2to3 --exclude=config-3.\* -c . | tar -C "$rootfs$stdlib" -x
rootfs_install "$rootfs" 0644 "$here/argo_sidecar/server.py" /plugin/server.py
rootfs_add_libraries "$rootfs" "$python" "$stdlib"/lib-dynload/*.so
rootfs_import "$rootfs" localhost/plugboard-test/argo-sidecar:latest podman \
  --change 'ENV PATH=/usr/bin' \
  --change 'CMD ["python3", "-u", "/plugin/server.py"]'
