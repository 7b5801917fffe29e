#!/usr/bin/env bash
# Checks that every C++ file git tracks under src/, tests/ and bench/ is formatted as .clang-format
# says (clang-format-14, the version CI installs). Changes nothing: lists the files that are not
# clean and exits 1; `clang-format-14 -i FILE...` fixes them.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -- 'src/*.cpp' 'src/*.h' 'tests/*.cpp' 'tests/*.h' 'bench/*.cpp' 'bench/*.h')
bad=()
for f in "${files[@]}"; do
  if ! clang-format-14 --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [ ${#bad[@]} -gt 0 ]; then
  echo "check-format: ${#bad[@]} of ${#files[@]} C++ files are not clang-format clean:" >&2
  printf '  %s\n' "${bad[@]}" >&2
  echo "fix them with: clang-format-14 -i ${bad[*]}" >&2
  exit 1
fi
echo "check-format: all ${#files[@]} C++ files are clang-format clean"
