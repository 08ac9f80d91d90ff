"""A venv with one PyPI tool, kept in leakgate's cache for the tests that validate against
published schemas (test_junit_schema.py: xmlschema; test_ci_configs.py: check-jsonschema)."""

import fcntl
import os
import subprocess
import sys
import venv


def tool_venv(package):
    """The venv's directory holding `package`; (None, why) when pip cannot install it."""
    cache = os.environ.get("LEAKGATE_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "leakgate")
    directory = os.path.join(cache, "test-tools", "%s-py%d.%d" % ((package,) + sys.version_info[:2]))
    os.makedirs(os.path.dirname(directory), exist_ok=True)
    # Several tests make it, maybe at once under ctest -j.
    with open(directory + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(os.path.join(directory, ".complete")):
            venv.create(directory, with_pip=True, clear=True)
            run = subprocess.run([os.path.join(directory, "bin", "python"), "-m", "pip", "install", "-q", package],
                                 capture_output=True, text=True, timeout=600)
            if run.returncode != 0:
                return None, run.stderr[-400:]
            open(os.path.join(directory, ".complete"), "w").close()
    return directory, ""
