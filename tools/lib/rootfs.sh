# Shell functions that make a container image without any image registry: a root file
# system in a temporary directory, holding programs and the shared libraries they need
# (found with ldd, with the dynamic loader), imported with `podman import`. Sourced by
# tools/plugin-image.sh, tools/argo/image.sh and the Python plugin image scripts; every file
# in the image is owned by root.

# rootfs_new: prints a new, empty root file system's directory (with /tmp, mode 1777).
# The caller removes it (rootfs_cleanup).
rootfs_new() {
  local dir
  dir=$(mktemp -d)
  chmod 0755 "$dir"
  mkdir -p "$dir/tmp" "$dir/usr/bin"
  chmod 1777 "$dir/tmp"
  echo "$dir"
}

rootfs_cleanup() { [ -n "${1:-}" ] && rm -rf "$1"; }

# rootfs_install ROOTFS MODE FILE DEST: copies FILE to ROOTFS/DEST (a path in the image),
# making its parent directories (mode 0755).
rootfs_install() {
  local rootfs=$1 mode=$2 file=$3 dest=$4
  install -d -m 0755 "$rootfs$(dirname "$dest")"
  install -m "$mode" "$file" "$rootfs$dest"
}

# rootfs_add_libraries ROOTFS BINARY...: the shared libraries of every BINARY, and the
# dynamic loader, at the paths the loader looks for them (ldd prints them resolved on this
# machine). Libraries a binary opens itself at run time (dlopen) are not seen.
rootfs_add_libraries() {
  local rootfs=$1 lib
  shift
  for binary in "$@"; do
    ldd "$binary" | grep -o '/[^ ]*' || true
  done | sort -u | while read -r lib; do
    [ -e "$lib" ] || continue
    install -d -m 0755 "$rootfs$(dirname "$lib")"
    cp -L "$lib" "$rootfs$lib"
  done
}

# rootfs_import ROOTFS IMAGE PODMAN [--change INSTRUCTION]...: imports ROOTFS as IMAGE,
# every file owned by root (uid and gid 0) whoever runs this.
rootfs_import() {
  local rootfs=$1 image=$2 podman=$3
  shift 3
  tar -C "$rootfs" --owner=0 --group=0 --numeric-owner -c . |
    "$podman" import --quiet "$@" - "$image" >/dev/null
}

# rootfs_add_python ROOTFS: this machine's /usr/bin/python3 (the Debian package's, also as
# /usr/bin/python), its libraries and its standard library, without what a plugin never
# needs (tests, IDLE, Tk, pip's bootstrap, 2to3, site-packages). Prints the standard
# library's directory.
rootfs_add_python() {
  local rootfs=$1 python stdlib
  python=$(readlink -f /usr/bin/python3)
  stdlib=$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
  rootfs_install "$rootfs" 0755 "$python" /usr/bin/python3
  ln -s python3 "$rootfs/usr/bin/python"  # the name Argo's plugin manifests run
  install -d -m 0755 "$rootfs$stdlib"
  tar -C "$stdlib" --exclude=__pycache__ --exclude=test --exclude=idlelib --exclude=tkinter \
    --exclude=ensurepip --exclude=lib2to3 --exclude=turtledemo --exclude=site-packages \
    --exclude=dist-packages --exclude=config-3.\* -c . | tar -C "$rootfs$stdlib" -x
  rootfs_add_libraries "$rootfs" "$python" "$stdlib"/lib-dynload/*.so
  echo "$stdlib"
}

# rootfs_add_debian_packages ROOTFS PACKAGE...: the files of Debian packages installed on
# this machine (`dpkg -L`, without documentation, manual pages and lintian overrides), with
# those of the python3-* packages they depend on, directly or not (a virtual package counts
# through the installed package that provides it), and the shared libraries their programs
# and extension modules link. Fails naming a package that is not installed.
rootfs_add_debian_packages() {
  local rootfs=$1 closure
  shift
  closure=$(python3 - "$@" <<'PY'
import subprocess, sys
fmt = "${Package}\t${Status}\t${Provides}\t${Depends}\t${Pre-Depends}\n"
rows = subprocess.run(["dpkg-query", "-W", "-f=" + fmt], capture_output=True, text=True).stdout
installed, provider = {}, {}
for row in rows.splitlines():
    name, status, provides, depends, pre = (row.split("\t") + [""] * 5)[:5]
    if not status.endswith(" installed"):
        continue
    installed[name] = ",".join(d for d in (depends, pre) if d)
    for p in provides.split(","):
        if p.strip():
            provider.setdefault(p.split()[0].split(":")[0], name)
todo, seen = list(sys.argv[1:]), []
for name in todo:
    if name not in installed:
        sys.exit("%s: the Debian package is not installed on this machine (apt-get install %s)" % (name, name))
while todo:
    name = todo.pop()
    if name in seen:
        continue
    seen.append(name)
    for alternatives in installed[name].split(","):
        for alt in alternatives.split("|"):
            dep = alt.split()[0].split(":")[0] if alt.strip() else ""
            dep = dep if dep in installed else provider.get(dep, "")
            if dep:
                if dep.startswith("python3-"):
                    todo.append(dep)
                break
print("\n".join(sorted(seen)))
PY
) || return 1
  local files elves
  # shellcheck disable=SC2086
  files=$(dpkg -L $closure | sort -u | grep -v -E '^/usr/share/(doc|man|lintian|bug)/|/__pycache__(/|$)' |
    while IFS= read -r f; do [ -d "$f" ] || [ ! -e "$f" ] || printf '%s\n' "$f"; done)
  printf '%s\n' "$files" | sed 's|^/||' | tar -C / -c -T - | tar -C "$rootfs" -x
  elves=$(printf '%s\n' "$files" | python3 -c '
import os, sys
for f in sys.stdin.read().split("\n"):
    if f and os.path.isfile(f) and not os.path.islink(f):
        with open(f, "rb") as h:
            if h.read(4) == b"\x7fELF":
                print(f)')
  # shellcheck disable=SC2086
  [ -z "$elves" ] || rootfs_add_libraries "$rootfs" $elves
}
