#!/bin/sh
# The C/C++ toolchains the ahead-of-time tests, examples and benchmark build with: the
# host's gcc/g++, and for AArch64 Debian's cross compilers run under qemu-user. Installs
# the missing Debian packages (as root, or through passwordless sudo); never fails: where
# they cannot be installed the tests that need them skip, saying what is missing.
set -u
missing=""
command -v gcc >/dev/null 2>&1 || missing="$missing gcc"
command -v g++ >/dev/null 2>&1 || missing="$missing g++"
if [ "$(uname -m)" != "aarch64" ]; then
    command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || missing="$missing gcc-aarch64-linux-gnu"
    command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 || missing="$missing g++-aarch64-linux-gnu"
    command -v qemu-aarch64 >/dev/null 2>&1 || command -v qemu-aarch64-static >/dev/null 2>&1 \
        || missing="$missing qemu-user"
fi
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
    echo "aot toolchains: missing$missing and no apt-get here; the tests needing them skip"
    exit 0
fi
if [ "$(id -u)" = "0" ]; then
    sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo="sudo -n"
else
    echo "aot toolchains: missing$missing (not root: apt-get install -y$missing); the tests needing them skip"
    exit 0
fi
echo "aot toolchains: installing$missing"
if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null; }; then
    echo "aot toolchains: could not install$missing; the tests needing them skip"
fi
exit 0
