#!/usr/bin/env bash
# Moves every published crate to version NEW in one step: the workspace version (which every
# crate inherits), the version requirements between the kbr crates, Cargo.lock, and with them
# the kbr-runtime requirement `kbr init` writes (it pins the runtime of its own version); then
# regenerates the golden testdata, whose PROJECT and Cargo.toml record the version.
#
#   bash hack/bump-version.sh NEW        # e.g. 0.2.0
#
# Then: add NEW's section to CHANGELOG.md, run `bash hack/release-check.sh`, commit, tag vNEW.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
new="${1:?usage: bash hack/bump-version.sh NEW}"
if ! [[ $new =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "bump-version: $new is not a semantic version such as 0.2.0" >&2
  exit 1
fi
cd "$repo"
old="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)"
[[ -n $old ]] || { echo "bump-version: no [workspace.package] version in Cargo.toml" >&2; exit 1; }

# The workspace version, and each kbr crate's requirement on the others.
sed -i -e "/^\[workspace.package\]/,/^\[/s/^version = \"$old\"/version = \"$new\"/" \
  -e "s/^\(kbr-[a-z]* = { path = \"[a-z]*\", version = \)\"$old\"/\1\"$new\"/" Cargo.toml
cargo update --workspace --quiet
echo "kbr crates: $old -> $new"
grep -E '^(version|kbr-[a-z]+) = ' Cargo.toml

bash testdata/generate.sh >/dev/null
git --no-pager diff --stat
