#!/usr/bin/env bash
# Verifier entry point (Harbor contract). pytest writes the CTRF report; reward.txt is 1
# only when every check passed. The paths default to Harbor's and can be moved (local backend).
export PYTHONDONTWRITEBYTECODE=1
LOGS="${VERIFIER_LOGS_DIR:-/logs/verifier}"
TESTS="${TESTS_DIR:-/tests}"
mkdir -p "$LOGS"
cd "${APP_DIR:-/app}" || exit 1
# Only the CTRF plugin is loaded (autoloading every installed plugin costs seconds), and
# --rootdir/--confcutdir keep a conftest.py or pytest.ini planted in /app out of the run.
PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 pytest -p ctrf.main --ctrf "$LOGS/ctrf.json" \
    --rootdir="$TESTS" --confcutdir="$TESTS" -p no:cacheprovider -rA "$TESTS"/test_*.py
if [ $? -eq 0 ]; then echo 1 > "$LOGS/reward.txt"; else echo 0 > "$LOGS/reward.txt"; fi
