# The two commands of the README (`make run`, `make test`) and a few more.
# Every target installs what is missing first (scripts/setup is a no-op when all is there).
PRESET ?= release
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: setup build run test test-tsan test-asan bench clean

setup:
	@scripts/setup

build: setup
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# Until `baton serve` exists: the same engines solo, then under concurrent and serialize.
run: build
	@scripts/demo $(BUILD_DIR)/baton

CTEST_ARGS ?=
test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The soak tests check timing (detection latency, no false slowdowns); under a sanitizer
# every thread runs 5-15x slower, so there they would measure the sanitizer.
test-tsan:
	@TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	  $(MAKE) --no-print-directory test PRESET=tsan CTEST_ARGS="-LE soak"

test-asan:
	@$(MAKE) --no-print-directory test PRESET=asan CTEST_ARGS="-LE soak"


bench: build
	@$(BUILD_DIR)/bench/turn_bench
	@scripts/repro-table $(BUILD_DIR)/baton

clean:
	rm -rf build
