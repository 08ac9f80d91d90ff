# Sourced by scripts/build.sh, scripts/test.sh, scripts/wheels.sh and bench/run_all.sh: which CPython
# builds, tests or makes a wheel.

# The CPython X.Y on this machine (pyenv's, with a shared libpython, else Debian's): its path, or
# nothing and status 1.
python_for() {
    local candidate
    for candidate in /root/.pyenv/versions/$1.*/bin/python3 /usr/bin/python$1; do
        [ -x "$candidate" ] && { echo "$candidate"; return 0; }
    done
    return 1
}

# The CPython a build embeds when none is given: 3.11 (python_for), else python3 on PATH.
default_python() {
    python_for 3.11 || command -v python3
}
