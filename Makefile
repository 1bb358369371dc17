# The two commands of the README (`make run`, `make test`) and a few more.
# Every target installs what is missing first (scripts/setup is a no-op when all is there).
PRESET ?= release
BUILD_DIR := build/$(PRESET)
JOBS ?= $(shell nproc)

.PHONY: setup build run demo test test-tsan test-asan fuzz bench clean

setup:
	@scripts/setup

build: setup
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build $(BUILD_DIR) -j $(JOBS)

# `baton serve` on the default models of models/ (two chat, one embedding) on the CPU; Ctrl-C
# stops it.
run: build
	@scripts/serve-default $(BUILD_DIR)

# The earlier demonstration: engines solo, then under concurrent and serialize.
demo: build
	@scripts/demo $(BUILD_DIR)/baton

CTEST_ARGS ?=
test: build
	@ctest --test-dir $(BUILD_DIR) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# The soak tests check timing (detection latency, no false slowdowns); under a sanitizer
# every thread runs 5-15x slower, so there they would measure the sanitizer. The e2e tests
# (tests/e2e) time an injected hang against a 0.3 s watchdog deadline too, and start a
# dozen servers: left out under ThreadSanitizer, run under ASan.
test-tsan:
	@TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	  $(MAKE) --no-print-directory test PRESET=tsan CTEST_ARGS="-LE 'soak|e2e'"

test-asan:
	@$(MAKE) --no-print-directory test PRESET=asan CTEST_ARGS="-LE soak"

# libFuzzer (clang, ASan+UBSan) for FUZZ_SECONDS in all, split evenly between the seven
# targets: the CSV importers (seeds fuzz/corpus/csv), the safetensors parser (seeds
# fuzz/corpus/safetensors), the tokenizer.json reader (seeds fuzz/corpus/tokenizer), the
# server's request parsers (seeds fuzz/corpus/openai), the Jinja engine of chat
# templates (seeds fuzz/corpus/jinja: published models' templates), the GGUF header
# reader (seeds fuzz/corpus/gguf) and the JSON Schema compiler with the grammar matcher
# (seeds fuzz/corpus/json_schema).
# Each keeps what it finds in build/fuzz/corpus/NAME; a crashing input is written to
# build/fuzz/crash-* and fails the target.
FUZZ_SECONDS ?= 60
FUZZ_EACH = $(shell s=$$(( $(FUZZ_SECONDS) / 7 )); echo $$(( s > 0 ? s : 1 )))
fuzz: setup
	@cmake --preset fuzz >/dev/null
	@cmake --build build/fuzz -j $(JOBS) --target csv_import_fuzz safetensors_fuzz \
	  tokenizer_json_fuzz openai_request_fuzz jinja_fuzz gguf_fuzz json_schema_fuzz
	@mkdir -p build/fuzz/corpus/csv build/fuzz/corpus/safetensors build/fuzz/corpus/tokenizer \
	  build/fuzz/corpus/openai build/fuzz/corpus/jinja build/fuzz/corpus/gguf \
	  build/fuzz/corpus/json_schema
	@build/fuzz/fuzz/csv_import_fuzz -max_total_time=$(FUZZ_EACH) -dict=fuzz/csv_import.dict \
	  -artifact_prefix=build/fuzz/ -print_final_stats=1 build/fuzz/corpus/csv fuzz/corpus/csv
	@build/fuzz/fuzz/safetensors_fuzz -max_total_time=$(FUZZ_EACH) -dict=fuzz/safetensors.dict \
	  -artifact_prefix=build/fuzz/ -print_final_stats=1 build/fuzz/corpus/safetensors \
	  fuzz/corpus/safetensors
	@build/fuzz/fuzz/tokenizer_json_fuzz -max_total_time=$(FUZZ_EACH) \
	  -dict=fuzz/tokenizer_json.dict -artifact_prefix=build/fuzz/ -print_final_stats=1 \
	  build/fuzz/corpus/tokenizer fuzz/corpus/tokenizer
	@build/fuzz/fuzz/openai_request_fuzz -max_total_time=$(FUZZ_EACH) \
	  -dict=fuzz/openai_request.dict -artifact_prefix=build/fuzz/ -print_final_stats=1 \
	  build/fuzz/corpus/openai fuzz/corpus/openai
	@build/fuzz/fuzz/jinja_fuzz -max_total_time=$(FUZZ_EACH) -dict=fuzz/jinja.dict \
	  -artifact_prefix=build/fuzz/ -print_final_stats=1 build/fuzz/corpus/jinja fuzz/corpus/jinja
	@build/fuzz/fuzz/gguf_fuzz -max_total_time=$(FUZZ_EACH) -dict=fuzz/gguf.dict \
	  -artifact_prefix=build/fuzz/ -print_final_stats=1 build/fuzz/corpus/gguf fuzz/corpus/gguf
	@build/fuzz/fuzz/json_schema_fuzz -max_total_time=$(FUZZ_EACH) -dict=fuzz/json_schema.dict \
	  -artifact_prefix=build/fuzz/ -print_final_stats=1 build/fuzz/corpus/json_schema \
	  fuzz/corpus/json_schema

bench: build
	@$(BUILD_DIR)/bench/turn_bench
	@scripts/repro-table $(BUILD_DIR)/baton

clean:
	rm -rf build
