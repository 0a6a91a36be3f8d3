#!/bin/sh
# Launcher shipped at the top of the krew archive as kubectl-tspread (scripts/release
# puts it there). It runs the vendored lib/ next to it with the first system CPython
# the archive carries a lib/cp3XY/ for (numpy and the other compiled dependencies are
# built per Python version); nothing else needs to be installed.

# Invoked through a link named kubectl_complete-tspread, it answers kubectl's (>= 1.26)
# completion requests; the name is checked before links are resolved for that reason.
case ${0##*/} in
    kubectl_complete-*) entry=complete_main ;;
    *) entry=main ;;
esac

# krew links ~/.krew/bin/kubectl-tspread to this file: follow the links to find lib/.
# (`readlink -f` is missing on older macOS, so resolve one hop at a time.)
self=$0
while [ -L "$self" ]; do
    link=$(readlink "$self")
    case $link in
        /*) self=$link ;;
        *) self=$(dirname "$self")/$link ;;
    esac
done
root=$(cd -P "$(dirname "$self")" && pwd -P) || exit 1

if [ ! -d "$root/lib/kubectl_tspread" ]; then
    echo "error: $root/lib/kubectl_tspread is missing; reinstall the plugin (kubectl krew reinstall tspread)" >&2
    exit 1
fi

# The Python versions this archive carries, e.g. " 3.10 3.11 3.12"
carried=
for dir in "$root"/lib/cp3*; do
    [ -d "$dir" ] && carried="$carried 3.${dir##*/cp3}"
done

# Prints cp3XY for a CPython, nothing for another implementation; fails if it cannot run
# (pyenv-style shims can exist and still fail, so ask the interpreter itself).
abi_of() {
    "$1" -c 'import sys; print("cp%d%d" % sys.version_info[:2] if sys.implementation.name == "cpython" else "")' 2>/dev/null
}

run_with() {  # PYTHON ABI ARGS...
    py=$1 abi=$2
    shift 2
    # -I -S: no site-packages and no PYTHON* variables, so nothing installed on the
    # machine can shadow or break the vendored dependencies.
    exec "$py" -I -S -c '
import sys
lib, abi, entry = sys.argv.pop(1), sys.argv.pop(1), sys.argv.pop(1)
sys.path[0:0] = [lib + "/" + abi, lib]
sys.argv[0] = "kubectl-tspread"
from kubectl_tspread import cli
sys.exit(getattr(cli, entry)())
' "$root/lib" "$abi" "$entry" "$@"
}

# TSPREAD_PYTHON is a choice: an interpreter the archive has no build for is an error,
# not a reason to pick another.
if [ -n "${TSPREAD_PYTHON:-}" ]; then
    abi=$(abi_of "$TSPREAD_PYTHON") || abi=
    if [ -z "$abi" ] || [ ! -d "$root/lib/$abi" ]; then
        echo "error: TSPREAD_PYTHON=$TSPREAD_PYTHON is not a CPython this archive carries builds for (CPython$carried); point it at one of those or unset it" >&2
        exit 1
    fi
    run_with "$TSPREAD_PYTHON" "$abi" "$@"
fi

# Otherwise python3, then the versioned names, newest first.
for py in python3 python3.14 python3.13 python3.12 python3.11 python3.10; do
    command -v "$py" >/dev/null 2>&1 || continue
    abi=$(abi_of "$py") || continue
    [ -n "$abi" ] && [ -d "$root/lib/$abi" ] || continue
    run_with "$py" "$abi" "$@"
done

echo "error: kubectl-tspread needs CPython$carried (one of the versions this archive carries) and found none on PATH; install one (python3) or set TSPREAD_PYTHON=/path/to/python3" >&2
exit 1
