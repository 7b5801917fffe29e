#!/usr/bin/env bash
# Installs the Debian 12 packages nki-agent builds and runs with. Idempotent: only packages
# that are missing are installed, and apt-get update runs only when something is missing.
set -euo pipefail

PACKAGES=(
  cmake ninja-build pkg-config g++ git clang-format-14
  libcli11-dev nlohmann-json3-dev libcurl4-openssl-dev libssl-dev libcpp-httplib-dev
  libsqlite3-dev libsqlitecpp-dev libspdlog-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libopenblas-dev libeigen3-dev libimath-dev libtomlplusplus-dev libexpected-dev libseccomp-dev
  python3.11 python3.11-dev libpython3.11-dev pybind11-dev python3-numpy python3-torch python3-greenlet
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
