# Sourced by scripts/build.sh and bench/run_all.sh: the CPython a build embeds when none is given
# (a shared-libpython 3.11 from pyenv, else Debian's, else python3 on PATH).
default_python() {
    for candidate in /root/.pyenv/versions/3.11.*/bin/python3 /usr/bin/python3.11; do
        [ -x "$candidate" ] && { echo "$candidate"; return; }
    done
    command -v python3
}
