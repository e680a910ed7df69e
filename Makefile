# factdesk — set-up, run, test, bench. `make run` and `make test` create .venv when missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: run test test-fast test-servers lint bench bench-scale screenshots clean-venv demo dist package icons static-model mutate

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	# The CPU build of torch first: a plain install would pull a multi-GB CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[semantic,dev]'
	# The static embedding model, once, at set-up (progress on the terminal): the first
	# window has semantic search at once, and no test distils it under its own timeout.
	$(PY) packaging/build_static_model.py
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/factdesk $(ARGS)

test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m "not slow" $(PYTEST_ARGS)

test-fast: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m "not slow and not gui" $(PYTEST_ARGS)

# Sync, clone, fetch and push through real servers on 127.0.0.1 (slow, so `make test` skips
# them): git's smart HTTP over https (`git http-backend`, a self-signed certificate given to
# git through GIT_SSL_CAINFO) and an sshd with key authentication (skipped with the reason
# where there is no sshd: apt-get install openssh-server). tests/review/test_sync_servers.py
test-servers: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -rs -m slow tests/review/test_sync_servers.py $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check app tests bench scripts packaging
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# issue 23: 10k / 100k / 1M facts side by side with their floors, log-log pictures in
# docs/scale/ (generates the corpora once under bench/out: the 1M one takes about an hour)
bench-scale: $(STAMP)
	$(PY) bench/scale_sizes.py $(SCALE_ARGS)

bench: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) bench/run_bench.py $(BENCH_ARGS)
	QT_QPA_PLATFORM=offscreen $(PY) bench/gui_bench.py
	QT_QPA_PLATFORM=offscreen $(PY) bench/gui_bench.py --first-run
	QT_QPA_PLATFORM=offscreen $(PY) bench/curation_bench.py
	QT_QPA_PLATFORM=offscreen $(PY) bench/proposals_gui_bench.py
	$(PY) bench/semantic_bench.py
	$(PY) bench/mislabel_quality.py --big
	$(PY) bench/settlement_recall.py
	$(PY) bench/messages_bench.py --facts 100000 --messages 10000
	$(PY) bench/proposals_bench.py && $(PY) bench/proposals_quality.py
	$(PY) bench/decide_bench.py
	$(PY) bench/sync_bench.py --facts 100000
	QT_QPA_PLATFORM=offscreen $(PY) bench/agents_bench.py --facts 100000 --commits 5000

# Mutation testing of the trust code (issue 22; hours on a 2-core machine, not in CI):
# `make mutate MUTATE_ARGS="--modules trust status --sample 40"` for a quick look.
mutate: $(STAMP)
	$(PY) -m pip install -q 'cosmic-ray>=8.7' 'coverage>=7.4'
	$(PY) scripts/mutate.py $(MUTATE_ARGS)

screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) scripts/screenshots.py

# The static embedding model, distilled once into the package data (not in git): the wheel,
# the sdist and the bundle ship it, so none of them needs torch for semantic search.
static-model: $(STAMP)
	$(PY) packaging/build_static_model.py

# The wheel and the sdist in dist/ (docs/packaging.md).
dist: static-model
	$(PY) -m build --outdir dist .
	rm -rf app/factdesk.egg-info  # setuptools' leftover would shadow the installed metadata
	$(PY) packaging/record_sizes.py

# The one-folder bundle dist/factdesk/ (PyInstaller, packaging/factdesk.spec), then its smoke
# test: it opens the demo corpus offscreen and measures the first paint (dist/factdesk-smoke.json).
package: $(VENV)/.package-installed static-model
	rm -rf dist/factdesk
	$(VENV)/bin/pyinstaller --noconfirm --distpath dist --workpath build/pyinstaller packaging/factdesk.spec
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -s -m slow tests/test_bundle.py -p no:cacheprovider
	$(PY) packaging/record_sizes.py

$(VENV)/.package-installed: $(STAMP)
	$(PY) -m pip install -q -e '.[semantic,dev,package]'
	touch $@

# Re-render app/factdesk/desktop_data/icons/*.png and factdesk.ico from app/factdesk/desktop_data/icons/factdesk.svg.
icons: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) packaging/make_icons.py

clean-venv:
	rm -rf $(VENV)
