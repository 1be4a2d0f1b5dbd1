#!/usr/bin/env bash
# Verify captured webhook deliveries with the Standard Webhooks reference library for Python
# (`standardwebhooks` from PyPI), installed into a virtual environment of its own the first
# time: the receivers' view, with nothing of ours between the delivery and the check.
#
# Usage: tests/webhooks/verify.sh CASES.json   (the cases and the answer: see verify.py)
set -euo pipefail
cd "$(dirname "$0")"
CASES=${1:?usage: verify.sh CASES.json}
VENV=${TNS_STANDARDWEBHOOKS_VENV:-/tmp/tns-standardwebhooks-venv}
VERSION=1.1.0

# Tests run in parallel: one installs, the others wait for it.
exec 9>"$VENV.lock"
flock 9
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('standardwebhooks') != '$VERSION')" \
  2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "standardwebhooks==$VERSION"
fi
flock -u 9
exec "$VENV/bin/python" verify.py "$CASES"
