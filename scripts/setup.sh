#!/usr/bin/env bash
# Installs what leakgate needs to build and test on Debian bookworm. Idempotent and
# non-interactive: packages already present are left alone, apt runs only when one is missing.
set -euo pipefail

# pybind11-dev to libtomlplusplus-dev: the versions the tests ran with; the build takes them where
# installed, else PyPI's pybind11 and the copies in third_party/ (cmake/dependencies.cmake).
packages=(cmake g++ make pkg-config python3.11-dev
          pybind11-dev libfmt-dev libcli11-dev nlohmann-json3-dev libtomlplusplus-dev
          libgtest-dev libgmock-dev libbenchmark-dev
          libclang-14-dev
          clang-format-14  # tests/layers/check_format.py
          debootstrap  # tests/package/bare_root.sh: the bare Debian root the wheel is tried on
          clang-16 libclang-rt-16-dev llvm-16
          chromium)  # the HTML report's test looks at it in a real browser (headless)
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
