#!/bin/sh
# Launcher shipped at the top of the krew archive as kubectl-tspread (scripts/release
# puts it there). It runs the vendored lib/ next to it with the first system
# Python >= 3.10 it finds; nothing else needs to be installed.

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

# TSPREAD_PYTHON picks the interpreter; otherwise the newest-first list after python3.
for py in ${TSPREAD_PYTHON:+"$TSPREAD_PYTHON"} python3 python3.14 python3.13 python3.12 python3.11 python3.10; do
    command -v "$py" >/dev/null 2>&1 || continue
    # pyenv-style shims can exist and still fail to run, so ask the interpreter itself.
    "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1 || continue
    # -I -S: no site-packages and no PYTHON* variables, so nothing installed on the
    # machine can shadow or break the vendored dependencies.
    exec "$py" -I -S -c '
import sys
lib, entry = sys.argv.pop(1), sys.argv.pop(1)
sys.path.insert(0, lib)
sys.argv[0] = "kubectl-tspread"
from kubectl_tspread import cli
sys.exit(getattr(cli, entry)())
' "$root/lib" "$entry" "$@"
done

echo "error: kubectl-tspread needs Python 3.10 or newer and found none on PATH; install one (python3) or set TSPREAD_PYTHON=/path/to/python3" >&2
exit 1
