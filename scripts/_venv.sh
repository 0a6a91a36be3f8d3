# Sourced by scripts/test and scripts/demo (bash). Creates or reuses .venv in the repo
# root and installs the project into it in editable mode with its test extras.
#
# The install runs only when setup.cfg or pyproject.toml changed since the last one
# (a checksum is kept in .venv), so a second run starts in well under a second.
# Sets: repo_root, venv_dir, venv_python.

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
venv_dir="$repo_root/.venv"
venv_python="$venv_dir/bin/python"
_stamp="$venv_dir/.tspread-install-stamp"

_die() {
    echo "error: $*" >&2
    exit 1
}

_pick_python() {
    # PYTHON lets a developer choose the interpreter; otherwise the first python3 on PATH.
    local py=${PYTHON:-python3}
    command -v "$py" >/dev/null 2>&1 ||
        _die "$py not found; install Python 3.10 or newer, or set PYTHON=/path/to/python3"
    "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null ||
        _die "$("$py" -V 2>&1) is too old; kubectl-tspread needs Python 3.10 or newer (set PYTHON=/path/to/python3.10+)"
    echo "$py"
}

_make_venv() {
    local py
    py=$(_pick_python)
    if ! "$py" -m venv "$venv_dir" >/dev/null 2>&1; then
        # A half-made .venv would be reused next time and fail in a stranger way.
        rm -rf "$venv_dir"
        _die "$py cannot create a virtual environment; install its venv module (Debian/Ubuntu: apt-get install python3-venv) and rerun"
    fi
}

_want_stamp() {
    cat "$repo_root/setup.cfg" "$repo_root/pyproject.toml" | cksum
}

_install_project() {
    local want
    want=$(_want_stamp)
    if [ -f "$_stamp" ] && [ "$(cat "$_stamp")" = "$want" ]; then
        return 0
    fi
    echo "Installing kubectl-tspread and its test dependencies into $venv_dir ..." >&2
    # PYTHONWARNINGS=ignore: setuptools' generic notes about editable installs are noise
    # here; real failures are errors and still show.
    PYTHONWARNINGS=ignore "$venv_python" -m pip install --quiet --disable-pip-version-check \
        --no-input -e "$repo_root[test]" ||
        _die "pip could not install the project into $venv_dir (see pip's message above)"
    echo "$want" >"$_stamp"
}

if [ ! -x "$venv_python" ]; then
    _make_venv
fi
_install_project
