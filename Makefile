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

test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS)

test-tsan:
	@$(MAKE) --no-print-directory test PRESET=tsan

test-asan:
	@$(MAKE) --no-print-directory test PRESET=asan

bench: build
	@$(BUILD_DIR)/bench/turn_bench
	@scripts/repro-table $(BUILD_DIR)/baton

clean:
	rm -rf build
