# rsi-lite's offline verifier shims: sourced by uv, uvx, pip, apt-get and curl below.
# A Harbor verifier usually installs its test runner over the network first (apt-get install curl, the uv
# installer, uvx --with pytest ... pytest --ctrf ...). Offline, these shims stand in: pytest runs from the
# kit's own environment (which has pytest and the CTRF plugin), an install of something already present
# succeeds, and any other install is refused with one line saying so.
RSI_PYTHON="@PYTHON@"

rsi_note() { echo "rsi-lite offline shim: $*" >&2; }

# true if every requirement (name, name==1.2, name[extra]>=1) is installed in the kit's environment
rsi_python_has() {
  local missing=()
  for req in "$@"; do
    local name="${req%%[<>=!~;\[ ]*}"
    [ -z "$name" ] && continue
    "$RSI_PYTHON" -c "import importlib.metadata as m, sys; m.version(sys.argv[1])" "$name" 2>/dev/null \
      || missing+=("$name")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    rsi_note "not installed offline: ${missing[*]} (only packages already in the kit's environment are accepted)"
    return 1
  fi
  return 0
}

# run a tool from the kit's environment: pytest (with the CTRF plugin) or python
rsi_run_tool() {
  local tool="$1"; shift
  case "$tool" in
    pytest|py.test) exec "$RSI_PYTHON" -m pytest "$@" ;;
    python|python3) exec "$RSI_PYTHON" "$@" ;;
    *) rsi_note "only pytest and python run offline (asked for: $tool)"; exit 127 ;;
  esac
}
