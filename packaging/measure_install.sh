#!/bin/bash
# The install size of factdesk in fresh venvs (docs/packaging.md): on PySide6-Essentials as
# pyproject.toml asks, then with the PySide6 meta-package added (what it depended on before).
#   packaging/measure_install.sh [WORKDIR]    (default: a new temporary folder)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d)}
mkdir -p "$work/src"
cp -r "$here/app" "$here/pyproject.toml" "$here/README.md" "$work/src/"
python3 -m venv "$work/essentials"
"$work/essentials/bin/pip" install -q --upgrade pip
"$work/essentials/bin/pip" install -q "$work/src"
echo "on PySide6-Essentials: $(du -sm "$work/essentials" | cut -f1) MiB"
python3 -m venv "$work/meta"
"$work/meta/bin/pip" install -q --upgrade pip
"$work/meta/bin/pip" install -q "$work/src" "PySide6==$("$work/essentials/bin/pip" show PySide6-Essentials | awk '/^Version/{print $2}')"
echo "with the PySide6 meta-package: $(du -sm "$work/meta" | cut -f1) MiB"
