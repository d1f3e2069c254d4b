# The two setup commands of the README:
#   make run   installs what the local lab needs and is missing (the "run"
#              packages of scripts/debian-packages.txt), builds loadlabd,
#              loadlab-agent and loadlab, starts loadlabd on 127.0.0.1:8080
#              and one local loadlab-agent (LOCAL_AGENT=0: the daemon alone);
#              Ctrl-C stops both (scripts/run-lab.sh)
#   make test  installs every package that is missing (optional ones may fail:
#              their tests skip, saying why), builds (plain, ASan+UBSan and
#              the Windows agents), runs ctest; prints each phase's time
# Other targets: build, asan, windows, install (DESTDIR, PREFIX), clean,
# bench (every benchmark under tests/bench/, one table; not part of `make test`),
# lab-check (the checks of precision and noise, on a quiet machine; not part
# of `make test`: tests/lab/README.md).

BUILD_DIR ?= build
ASAN_DIR ?= build-asan
JOBS ?= $(shell nproc)
LISTEN ?= 127.0.0.1:8080
DATA_DIR ?= $(CURDIR)/var
LOCAL_AGENT ?= 1
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps deps-run build build-only asan asan-only run test clean windows windows-only install \
	bench lab-check

all: build

deps:
	@scripts/install-deps.sh test

deps-run:
	@scripts/install-deps.sh run

# build, asan and windows install what is missing first; their *-only
# twins do not (scripts/make-test.sh runs the packages as a phase of its own).
build: deps
	@$(MAKE) --no-print-directory build-only

build-only:
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

asan: deps
	@$(MAKE) --no-print-directory asan-only

asan-only:
	@cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DLOADLAB_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_DIR) -j $(JOBS)

# The build runs inside scripts/run-lab.sh (BUILD_FIRST=1), quietly: its
# output goes to $(BUILD_DIR)/run-lab-build.log, the terminal gets the lab's
# own lines.
run: deps-run
	@BUILD_DIR='$(BUILD_DIR)' JOBS='$(JOBS)' BUILD_FIRST=1 LISTEN='$(LISTEN)' DATA_DIR='$(DATA_DIR)' \
		LOCAL_AGENT='$(LOCAL_AGENT)' exec scripts/run-lab.sh

# The Windows agents (build-win64/agent/loadlab-agent.exe, x64, Vista- and
# 10-class; build-win32/agent/loadlab-agent.exe, x86, XP-class), cross-built
# with mingw-w64 against libcurl and cJSON built from Debian's sources.
# The two architectures' libraries build at once (curl's own Makefile.mk,
# no configure), and the script takes turns for apt.
windows: deps
	@scripts/build-windows-deps.sh x86_64 & x64=$$!; scripts/build-windows-deps.sh i686; x86=$$?; \
		wait $$x64 && [ $$x86 -eq 0 ]
	@$(MAKE) --no-print-directory windows-only

windows-only:
	@cmake -S . -B build-win64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-mingw-x86_64.cmake -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build build-win64 -j $(JOBS)
	@cmake -S . -B build-win32 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-mingw-i686.cmake -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build build-win32 -j $(JOBS)

# Every test runs in the plain build; the unit and integration tests run
# again in the ASan+UBSan build (ctest label "sanitize"). The phases
# (packages, Windows libraries, builds, tests) are timed and their wall
# times printed at the end (scripts/make-test.sh).
test:
	@BUILD_DIR='$(BUILD_DIR)' ASAN_DIR='$(ASAN_DIR)' JOBS='$(JOBS)' scripts/make-test.sh

# Binaries, systemd units (packaging/systemd/), their settings files,
# schemas and example jobs under DESTDIR + PREFIX, from an existing build
# (scripts/install.sh; it never builds: run make build first).
install:
	@DESTDIR='$(DESTDIR)' PREFIX='$(PREFIX)' BUILD_DIR='$(BUILD_DIR)' scripts/install.sh

# Every benchmark under tests/bench/ (a few minutes; the Wine ones under
# the machine-wide Wine lock), then one table: what, figure, reference,
# ratio, goal, met. Logs in $(BUILD_DIR)/bench/.
bench: build
	@tests/bench/run_benches.sh $(BUILD_DIR)

# The checks whose goals judge timings (calibration within +-10 %, A/A
# rows unchanged, a 5 % change found): run one after another on a quiet
# machine, each printing its figures beside its goals, then one table;
# exit 1 when a goal is missed. About 25 minutes. Logs in
# $(BUILD_DIR)/lab-check/. `make test` never gates on them.
lab-check: build
	@tests/lab/run_lab_checks.sh $(BUILD_DIR)

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) build-win64 build-win32
