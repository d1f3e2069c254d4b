# The two setup commands of the README:
#   make run   installs what is missing, builds, starts loadlabd on 127.0.0.1:8080
#   make test  installs what is missing, builds (plain and ASan+UBSan), runs ctest
# Other targets: build, asan, clean.

BUILD_DIR ?= build
ASAN_DIR ?= build-asan
JOBS ?= $(shell nproc)
LISTEN ?= 127.0.0.1:8080
DATA_DIR ?= $(CURDIR)/var

.PHONY: all deps build asan run test clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

asan: deps
	@cmake -S . -B $(ASAN_DIR) -DCMAKE_BUILD_TYPE=Debug -DLOADLAB_SANITIZE=ON >/dev/null
	@cmake --build $(ASAN_DIR) -j $(JOBS)

run: build
	@mkdir -p $(DATA_DIR)
	@echo "loadlabd: dashboard at http://$(LISTEN)/ ; tokens in $(DATA_DIR)/admin.token and $(DATA_DIR)/enroll.token"
	@exec $(BUILD_DIR)/server/loadlabd --listen $(LISTEN) --data-dir $(DATA_DIR)

# Every test runs in the plain build; the unit and integration tests run
# again in the ASan+UBSan build (ctest label "sanitize").
test: build asan
	@cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)
	@cd $(ASAN_DIR) && ctest --output-on-failure -j $(JOBS) -L sanitize

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR)
