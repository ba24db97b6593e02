#!/usr/bin/env bash
# tools/walkthrough.sh [--here] [--all] [--no-package] [--keep]
# Does what README.md says, command by command, in a clean clone of this checkout's HEAD
# (git clone into a temporary directory: uncommitted changes are not in it), then what the
# README of each project `plugboard new` writes says (a C++ plugin, a Python plugin, a
# deployer), in that project. The commands are read from the READMEs' ```sh blocks, so the
# walk-through follows the documentation as it is written. A command that fails is named
# (file, line, command) and that README stops there; the script goes on with the next
# README and exits 1 at the end if any failed.
#
# README.md's commands run as written, in order, in the clone, with these exceptions:
#   ./tools/demo.sh     the first command: the set-up itself (installs what is missing,
#                       configures and builds into build/, which ccache makes mostly cache
#                       hits), then the demo. It runs; what follows uses its build.
#   ./tools/test.sh, ./tools/test.sh --sanitize all, ./tools/fuzz.sh
#                       the whole test suite, the sanitizer runs and fuzzing: from tens of
#                       minutes to hours, and what CI runs anyway. Skipped unless --all.
#   ... serve ...       runs until stopped: started in a network namespace of its own (so
#                       port 7878 is free whatever else runs here), its status page fetched,
#                       then stopped with SIGTERM; it must have answered and exit 0.
#   ./tools/package.sh ... && sudo apt install ...
#                       run last (after the projects below: it is the slowest, a Release
#                       build, and nothing else uses it), in a throw-away copy of this
#                       machine's root (podman's overlay of /, discarded at the end), so that
#                       nothing is installed here; there, the commands of
#                       docs/configuration.md's "Installed from the packages" follow. (Run as
#                       root without sudo installed, `sudo` runs the command as is.)
#                       --no-package skips it.
#   wf.yaml, manifests/ a placeholder command (its files are the reader's): skipped.
#   ./tools/walkthrough.sh
#                       this script: not run again from itself.
# Each exception must still match a command of the README, or the walk-through fails: a
# renamed command is noticed. --here walks through this checkout instead of a clone (its
# build/ is then reused); --keep keeps the temporary directory.
set -uo pipefail
cd "$(dirname "$0")/.."
source_dir=$(pwd)

here=0 all=0 package=1 keep=0
while (($#)); do
  case $1 in
    --here) here=1 ;;
    --all) all=1 ;;
    --no-package) package=0 ;;
    --keep) keep=1 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "walkthrough: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

umask 022
work=$(mktemp -d "${TMPDIR:-/tmp}/plugboard-walkthrough.XXXXXX")
cleanup() { if ((keep)); then echo "walkthrough: kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT

if ((here)); then
  checkout=$source_dir
else
  git clone -q "$source_dir" "$work/plugboard" || { echo "walkthrough: git clone failed" >&2; exit 1; }
  checkout=$work/plugboard
fi
echo "walkthrough: in $checkout ($(git -C "$checkout" rev-parse --short HEAD))"

failures=()
say() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

# The commands of FILE's ```sh blocks, one per line: "LINE<TAB>COMMAND". Lines that are
# only a comment (a continued comment of the line above) are not commands; a line ending
# in a backslash continues on the next.
commands_of() {
  awk '
    /^```sh[[:space:]]*$/ { inside = 1; next }
    /^```/ { inside = 0; next }
    !inside { next }
    pending != "" { pending = pending "\n" $0; if ($0 !~ /\\$/) { print start "\t" pending; pending = "" } next }
    /^[[:space:]]*(#|$)/ { next }
    /\\$/ { start = NR; pending = $0; next }
    { print NR "\t" $0 }
  ' "$1"
}

# Runs COMMAND (bash, pipefail) in DIR; a failure is recorded as "WHERE: COMMAND".
run_command() {
  local dir=$1 where=$2 command=$3
  say "$where: $command"
  (cd "$dir" && bash -o pipefail -c "$command" </dev/null)
  local status=$?
  if ((status != 0)); then
    echo "walkthrough: FAILED (exit $status): $where: $command" >&2
    failures+=("$where: $command (exit $status)")
    return 1
  fi
}

# serve runs until stopped: in a network namespace of its own, its status page fetched, then
# SIGTERM; it must have answered and exited 0.
run_serve() {
  local dir=$1 where=$2 command=$3
  say "$where: $command   (in a network namespace of its own; stopped once its status page answers)"
  (cd "$dir" && unshare --net bash -o pipefail -c '
    ip link set lo up
    bash -c "exec $1" &
    serve=$!
    page=""
    for _ in $(seq 300); do
      page=$(curl -fsS http://127.0.0.1:7878/ 2>/dev/null) && break
      kill -0 $serve 2>/dev/null || break
      sleep 0.1
    done
    kill -TERM $serve 2>/dev/null
    wait $serve
    status=$?
    [ -n "$page" ] || { echo "serve never answered on 127.0.0.1:7878" >&2; exit 1; }
    echo "the status page answered ($(printf "%s" "$page" | wc -c) bytes)"
    exit $status' serve "$command" </dev/null)
  local status=$?
  if ((status != 0)); then
    echo "walkthrough: FAILED (exit $status): $where: $command" >&2
    failures+=("$where: $command (exit $status)")
    return 1
  fi
}

# The package command, then docs/configuration.md's "Installed from the packages"
# commands, in a throw-away copy of this machine's root.
run_package() {
  local dir=$1 where=$2 command=$3
  say "$where: $command   (in a throw-away copy of this machine's root)"
  local installed
  installed=$(awk '/^## Installed from the packages/ { on = 1; next } /^## / { on = 0 } on' \
    "$dir/docs/configuration.md" | commands_of /dev/stdin |
    grep -v -F 'tools/package.sh' | cut -f2-)
  local script
  script=$(printf '%s\n' \
    'set -o pipefail' 'export DEBIAN_FRONTEND=noninteractive' \
    'if [ "$(id -u)" -eq 0 ] && ! command -v sudo >/dev/null; then sudo() { "$@"; }; export -f sudo; fi' \
    "cd '$dir'" \
    "run() { printf '\\n==> %s\\n' \"\$1\"; bash -o pipefail -c \"\$1\" || { echo \"FAILED: \$1\" >&2; exit 1; }; }" \
    "run $(printf '%q' "$command")")
  while IFS= read -r line; do
    [ -n "$line" ] && script+=$'\n'"run $(printf '%q' "$line")"
  done <<<"$installed"
  podman run --rm --network=none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
    --rootfs /:O bash -c "$script" </dev/null
  local status=$?
  if ((status != 0)); then
    echo "walkthrough: FAILED (exit $status): $where: $command (or a command of docs/configuration.md after it, named above)" >&2
    failures+=("$where: $command (exit $status)")
    return 1
  fi
}

# The exceptions to running README.md's commands as written: pattern (an extended regular
# expression a command matches), then what is done with it.
declare -A special=(
  ['^\./tools/demo\.sh']=run
  ['^\./tools/test\.sh +#']=suite
  ['^\./tools/test\.sh --sanitize']=suite
  ['^\./tools/fuzz\.sh']=suite
  ['plugboard serve ']=serve
  ['^\./tools/package\.sh .*apt install']=package
  ['wf\.yaml --executor-plugins manifests/']=placeholder
  ['^\./tools/walkthrough\.sh']=itself
)
declare -A matched=()
deferred=()

walk_readme() {
  local dir=$1 readme=$2 label=$3
  local line command kind pattern
  while IFS=$'\t' read -r line command; do
    kind=run
    for pattern in "${!special[@]}"; do
      if [[ $command =~ $pattern ]]; then kind=${special[$pattern]}; matched[$pattern]=1; fi
    done
    case $kind in
      run) run_command "$dir" "$label:$line" "$command" || return 1 ;;
      serve) run_serve "$dir" "$label:$line" "$command" || return 1 ;;
      suite)
        if ((all)); then run_command "$dir" "$label:$line" "$command" || return 1
        else say "$label:$line: $command   (skipped: the test suite, sanitizers or fuzzing; --all runs it)"; fi ;;
      package)
        if ((package)); then
          say "$label:$line: $command   (run last, below)"
          deferred+=("$dir"$'\t'"$label:$line"$'\t'"$command")
        else say "$label:$line: $command   (skipped: --no-package)"; fi ;;
      placeholder) say "$label:$line: $command   (skipped: its files are placeholders)" ;;
      itself) say "$label:$line: $command   (skipped: this walk-through itself)" ;;
    esac
  done < <(commands_of "$readme")
}

walk_readme "$checkout" "$checkout/README.md" README.md
for pattern in "${!special[@]}"; do
  if [ -z "${matched[$pattern]:-}" ]; then
    echo "walkthrough: no command of README.md matches '$pattern' any more: update tools/walkthrough.sh" >&2
    failures+=("tools/walkthrough.sh: the exception '$pattern' matches no command")
  fi
done

# The projects `plugboard new` writes (README.md: "plugboard new plugin NAME [--lang
# cpp|python] (or plugboard new deployer NAME)"), with the CLI the README's build made, each
# walked through as its own README says.
mkdir -p "$work/projects"
for project in "plugin greeter" "plugin pygreeter --lang python" "deployer loader"; do
  read -r -a words <<<"$project"
  name=${words[1]}
  if run_command "$work/projects" "plugboard new" "$checkout/build/plugboard new $project"; then
    walk_readme "$work/projects/$name" "$work/projects/$name/README.md" "$name/README.md"
  fi
done

for entry in "${deferred[@]}"; do
  IFS=$'\t' read -r dir where command <<<"$entry"
  run_package "$dir" "$where" "$command"
done

echo
if ((${#failures[@]})); then
  echo "walkthrough: ${#failures[@]} command(s) failed:" >&2
  printf '  %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "walkthrough: every command of the READMEs succeeded"
