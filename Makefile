# rocesim — build, test, demo, bench.
# Sources are found by wildcard: a new module in sim/, models/, results_io/, analysis/, tune/, replay/ or cli/ and a new
# tests/test_*.c suite are built without editing this file.

CC      ?= gcc
PKGS    := glib-2.0 json-glib-1.0 libpcap zlib ompi-c
CFLAGS_COMMON := -std=gnu11 -Wall -Wextra -Werror -g -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -libverbs -lrdmacm -lm
TEST_LDLIBS := -lcunit

CFLAGS_RELEASE := $(CFLAGS_COMMON) -O2
# The release objects also carry GCC's intermediate code (fat LTO objects): the rocesim binary
# is linked with link-time optimisation (the models' small functions across files, such as
# the MMU's admission and PFC checks, inlined into the per-packet paths), while the test
# suites link the same archive's ordinary code without it, in a second each.
LTO_FLAGS := -flto=auto -ffat-lto-objects
CFLAGS_SAN     := $(CFLAGS_COMMON) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined

LIB_SRCS  := $(filter-out cli/main.c,$(wildcard sim/*.c models/*.c results_io/*.c analysis/*.c tune/*.c replay/*.c cli/*.c))
HDRS      := $(wildcard sim/*.h models/*.h results_io/*.h analysis/*.h tune/*.h replay/*.h cli/*.h tests/*.h)
TEST_SRCS := $(wildcard tests/test_*.c)

REL_OBJS  := $(patsubst %.c,build/obj/%.o,$(LIB_SRCS))
SAN_OBJS  := $(patsubst %.c,build/san/%.o,$(LIB_SRCS))
TESTS_REL := $(patsubst tests/%.c,build/tests/%,$(TEST_SRCS))
TESTS_SAN := $(patsubst tests/%.c,build/tests-san/%,$(TEST_SRCS))

# Debian packages the project needs; `make deps` installs the missing ones.
DEB_PKGS := build-essential pkg-config libglib2.0-dev libjson-glib-dev libpcap-dev zlib1g-dev \
            libibverbs-dev librdmacm-dev libcunit1-dev gnuplot-nox libopenmpi-dev openmpi-bin
DEB_CHECK_PKGS := tshark chromium iproute2 ethtool clang libclang-rt-14-dev

# libFuzzer harnesses (tests/fuzz/fuzz_*.c), built with clang against a clang ASan+UBSan
# build of the library. `make fuzz` fuzzes each for FUZZ_SECONDS into build/fuzz/corpus/;
# `make fuzz-replay` (part of check) runs every committed corpus and regression input once.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined
CFLAGS_FUZZ  := $(CFLAGS_COMMON) -O1 -fno-omit-frame-pointer $(FUZZ_SAN)
FUZZ_OBJS    := $(patsubst %.c,build/fuzz/obj/%.o,$(LIB_SRCS))
FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZERS      := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(FUZZ_SRCS))

.PHONY: all deps deps-check check layers toy-cc test test-san validate validate-fast fuzz fuzz-replay test-clang-san test-tsan demo bench clean
all: build/rocesim

deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# Extra tools used only by tests (tshark, headless chromium, netns, clang).
deps-check: deps
	@missing=""; for p in $(DEB_CHECK_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

build/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS_RELEASE) $(LTO_FLAGS) -c $< -o $@

build/san/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC san  $<"
	@$(CC) $(CFLAGS_SAN) -c $< -o $@

# The archive is rebuilt from scratch so a removed source leaves no stale object behind.
build/librocesim.a: $(REL_OBJS)
	@mkdir -p build
	@rm -f $@ && ar rcs $@ $^

build/librocesim-san.a: $(SAN_OBJS)
	@mkdir -p build
	@rm -f $@ && ar rcs $@ $^

# The rocesim binary is built with profile-guided optimisation (PGO=1, the default): an
# instrumented build of it runs bench/pgo-train, and its objects (build/pgo) are compiled
# again with those counts (branch layout, inlining and hot/cold splitting where the runs
# went). Measured 2026-12-05, interleaved runs on one core: the
# fabric bench at 20 ms 1.92-2.01 s -> 1.77-1.80 s, bench/scale.ini 1.00-1.08 -> 0.95-0.98 s.
# The results are the same byte for byte (the counts steer code layout, not arithmetic).
# PGO=0 links the release archive instead (no training, for quick rebuilds while editing).
PGO ?= 1
PGO_DATA := $(CURDIR)/build/pgo-data
PGO_OBJS := $(patsubst %.c,build/pgo/%.o,$(LIB_SRCS) cli/main.c)

# The instrumented objects and the final ones are the same files, built twice: GCC names a
# static function's counts after its object's path, so a second tree would find none. The
# training stamp builds and runs the instrumented binary (a sub-make with PGO_STAGE=gen);
# being newer than every object, it makes them all compile again with the counts.
ifeq ($(PGO_STAGE),gen)
PGO_FLAGS  := -fprofile-generate=$(PGO_DATA)
PGO_TRAINED :=
else
PGO_FLAGS  := -fprofile-use=$(PGO_DATA)
PGO_TRAINED := build/pgo-data/trained
endif

build/pgo/%.o: %.c $(HDRS) $(PGO_TRAINED)
	@mkdir -p $(dir $@)
	@echo "  CC $(if $(PGO_TRAINED),pgo,gen)  $<"
	@$(CC) $(CFLAGS_RELEASE) $(LTO_FLAGS) $(PGO_FLAGS) -c $< -o $@

build/pgo/rocesim-gen: $(PGO_OBJS)
	@echo "  LD gen  $@"
	@$(CC) $(CFLAGS_RELEASE) $(LTO_FLAGS) $(PGO_FLAGS) $^ $(LDLIBS) -o $@

build/pgo-data/trained: $(LIB_SRCS) cli/main.c $(HDRS) bench/pgo-train
	@rm -rf build/pgo $(PGO_DATA)
	@$(MAKE) -s --no-print-directory PGO_STAGE=gen build/pgo/rocesim-gen
	@echo "  PGO     bench/pgo-train"
	@mkdir -p $(PGO_DATA) && bench/pgo-train build/pgo/rocesim-gen
	@rm -f build/pgo/rocesim-gen
	@touch $@

ifeq ($(PGO),1)
build/rocesim: $(PGO_OBJS)
	@echo "  LD      $@"
	@$(CC) $(CFLAGS_RELEASE) $(LTO_FLAGS) $(PGO_FLAGS) $^ $(LDLIBS) -o $@
else
build/rocesim: cli/main.c build/librocesim.a
	@echo "  LD      $@"
	@$(CC) $(CFLAGS_RELEASE) $(LTO_FLAGS) $< build/librocesim.a $(LDLIBS) -o $@
endif

build/rocesim-san: cli/main.c build/librocesim-san.a
	@echo "  LD san  $@"
	@$(CC) $(CFLAGS_SAN) $< build/librocesim-san.a $(LDLIBS) -o $@

build/tests/%: tests/%.c build/librocesim.a $(wildcard tests/*.h)
	@mkdir -p build/tests
	@echo "  LD      $@"
	@$(CC) $(CFLAGS_RELEASE) $< build/librocesim.a $(LDLIBS) $(TEST_LDLIBS) -o $@

build/tests-san/%: tests/%.c build/librocesim-san.a $(wildcard tests/*.h)
	@mkdir -p build/tests-san
	@echo "  LD san  $@"
	@$(CC) $(CFLAGS_SAN) $< build/librocesim-san.a $(LDLIBS) $(TEST_LDLIBS) -o $@

build/validate: tests/validation/validate.c build/librocesim.a tests/testutil.h
	@echo "  LD      $@"
	@$(CC) $(CFLAGS_RELEASE) $< build/librocesim.a $(LDLIBS) $(TEST_LDLIBS) -o $@

# The fidelity suite: every model against an independent reference (a few minutes); the report
# is results/validation/report.md. validate-fast is the part that make check runs.
validate: deps
	@$(MAKE) -s --no-print-directory all build/validate build/tests/test_dcqcn_reference
	@rm -rf results/validation
	@ROCESIM=$(CURDIR)/build/rocesim build/validate results/validation

validate-fast: build/rocesim build/validate build/tests/test_dcqcn_reference
	@rm -rf build/validation-fast
	@ROCESIM=$(CURDIR)/build/rocesim build/validate --fast build/validation-fast

build/fuzz/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC fuzz $<"
	@$(FUZZ_CC) $(CFLAGS_FUZZ) -fsanitize=fuzzer-no-link -c $< -o $@

build/librocesim-fuzz.a: $(FUZZ_OBJS)
	@mkdir -p build
	@rm -f $@ && ar rcs $@ $^

build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h build/librocesim-fuzz.a
	@mkdir -p build/fuzz
	@echo "  LD fuzz $@"
	@$(FUZZ_CC) $(CFLAGS_FUZZ) -fsanitize=fuzzer $< build/librocesim-fuzz.a $(LDLIBS) -o $@

# Each input of tests/fuzz/corpus/NAME (seeds, and regressions named regress-*) once.
fuzz-replay: $(FUZZERS)
	@for f in $(FUZZERS); do n=$$(basename $$f); \
	  files=$$(find tests/fuzz/corpus/$$n -type f 2>/dev/null); \
	  [ -n "$$files" ] || { echo "FAIL $$n: no corpus in tests/fuzz/corpus/$$n"; exit 1; }; \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 $$f -rss_limit_mb=2048 -timeout=20 $$files \
	    > build/fuzz/$$n.replay.log 2>&1 \
	    || { tail -40 build/fuzz/$$n.replay.log; echo "FAIL $$n (build/fuzz/$$n.replay.log)"; exit 1; }; \
	  echo "ok   $$n ($$(echo "$$files" | wc -l) inputs replayed)"; \
	done

# The simulator itself under clang's ASan+UBSan, whose UBSan checks more than gcc's (e.g.
# pointer-overflow: "applying zero offset to null pointer"): every short scenario once.
CLANG_SAN_SCENARIOS := scenarios/deadlock.ini scenarios/pause-storm.ini scenarios/congestion-spreading.ini \
  scenarios/pfc-incast.ini scenarios/incast.ini scenarios/quickstart.ini scenarios/permutation.ini \
  scenarios/tune-ecn.ini scenarios/dcqcn-fluid.ini tests/scenarios/dcqcn_unit.ini tests/scenarios/gdirect.ini \
  tests/scenarios/determinism.ini tests/scenarios/dwrr.ini tests/scenarios/minimal.ini \
  tests/scenarios/ecn_incast.ini tests/scenarios/incast16.ini tests/scenarios/rate25.ini \
  tests/scenarios/single_flow.ini tests/scenarios/coll/rerun-mixed.ini tests/scenarios/coll/rerun-coll.ini \
  tests/scenarios/coll/algos.ini

build/rocesim-clang: cli/main.c build/librocesim-fuzz.a
	@echo "  LD fuzz $@"
	@$(FUZZ_CC) $(CFLAGS_FUZZ) $< build/librocesim-fuzz.a $(LDLIBS) -o $@

test-clang-san: build/rocesim-clang
	@rm -rf build/clang-runs; mkdir -p build/clang-runs; n=0; \
	for s in $(CLANG_SAN_SCENARIOS); do n=$$((n+1)); \
	  G_DEBUG=fatal-criticals UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 build/rocesim-clang run $$s -o build/clang-runs/$$n -q \
	    --no-plots > build/clang-runs/$$n.log 2>&1; rc=$$?; \
	  if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then cat build/clang-runs/$$n.log; echo "FAIL clang ASan+UBSan: $$s (exit $$rc)"; exit 1; fi; \
	done; rm -rf build/clang-runs; echo "ok   clang ASan+UBSan: $$n scenarios run"

# Parallel runs under clang's ThreadSanitizer: any data race between the workers of a run
# (--workers 3) fails the check. Scenarios that touch every cross-worker path: PFC storms
# and a fault, collectives with dependencies across hosts, servers, a link going down and
# the route convergence, the deadlock check, sampling of every kind; and transfers.csv's rows
# formatted on threads after the run (tests/scenarios/many-transfers.ini), the warnings and
# the slowdowns' percentiles found on threads of their own (tests/scenarios/many-small-transfers.ini).
TSAN_SCENARIOS := scenarios/pause-storm.ini scenarios/allreduce-ring.ini scenarios/training-step.ini \
  scenarios/deadlock.ini scenarios/congestion-spreading.ini scenarios/hpcc-incast.ini scenarios/lb-allreduce.ini \
  scenarios/moe-alltoall.ini scenarios/hot-rail.ini tests/scenarios/determinism.ini tests/scenarios/many-transfers.ini \
  tests/scenarios/many-small-transfers.ini
CFLAGS_TSAN := $(CFLAGS_COMMON) -O1 -fno-omit-frame-pointer -fsanitize=thread
TSAN_OBJS   := $(patsubst %.c,build/tsan/obj/%.o,$(LIB_SRCS))

build/tsan/obj/%.o: %.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC tsan $<"
	@$(FUZZ_CC) $(CFLAGS_TSAN) -c $< -o $@

build/librocesim-tsan.a: $(TSAN_OBJS)
	@rm -f $@ && ar rcs $@ $^

build/rocesim-tsan: cli/main.c build/librocesim-tsan.a
	@echo "  LD tsan $@"
	@$(FUZZ_CC) $(CFLAGS_TSAN) $< build/librocesim-tsan.a $(LDLIBS) -o $@

test-tsan: build/rocesim-tsan
	@rm -rf build/tsan-runs; mkdir -p build/tsan-runs; n=0; \
	for s in $(TSAN_SCENARIOS); do n=$$((n+1)); \
	  G_DEBUG=fatal-criticals TSAN_OPTIONS=halt_on_error=1:exitcode=66 build/rocesim-tsan run $$s -o build/tsan-runs/$$n -q --no-plots \
	    --workers 3 --set scenario.stop=1ms > build/tsan-runs/$$n.log 2>&1; rc=$$?; \
	  if [ $$rc -ne 0 ] && [ $$rc -ne 3 ]; then cat build/tsan-runs/$$n.log; echo "FAIL ThreadSanitizer: $$s (exit $$rc)"; exit 1; fi; \
	done; rm -rf build/tsan-runs; echo "ok   ThreadSanitizer, 3 workers: $$n scenarios run"

# Fuzzes every harness for FUZZ_SECONDS, starting from the committed corpus; new inputs
# go to build/fuzz/corpus/NAME, crashes to build/fuzz/NAME-crash-*; prints cov/ft/execs.
fuzz: $(FUZZERS)
	@for f in $(FUZZERS); do n=$$(basename $$f); mkdir -p build/fuzz/corpus/$$n; \
	  echo "== $$n: $(FUZZ_SECONDS) s"; \
	  $$f build/fuzz/corpus/$$n tests/fuzz/corpus/$$n -max_total_time=$(FUZZ_SECONDS) \
	    -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 -artifact_prefix=build/fuzz/$$n- \
	    > build/fuzz/$$n.log 2>&1; rc=$$?; \
	  grep -E 'DONE|stat::number_of_executed_units|stat::peak_rss' build/fuzz/$$n.log; \
	  [ $$rc -eq 0 ] || { tail -40 build/fuzz/$$n.log; echo "FAIL $$n (build/fuzz/$$n.log)"; exit 1; }; \
	done

# Every suite, release build then sanitizer build; tests/run-suites prints the closing tally.
# The suites need the test tools too (ethtool for the netns replay, tshark, chromium): without
# deps-check a fresh machine failed five suites under `make test` alone.
test: deps-check build/rocesim $(TESTS_REL)
	@ROCESIM=$(CURDIR)/build/rocesim tests/run-suites build/tests

test-san: deps-check build/rocesim-san $(TESTS_SAN)
	@ROCESIM=$(CURDIR)/build/rocesim-san ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 tests/run-suites build/tests-san

check: deps-check
	@tests/check-layers
	@tests/toy-cc.sh
	@$(MAKE) -s --no-print-directory all
	@$(MAKE) --no-print-directory validate-fast
	@$(MAKE) --no-print-directory test
	@$(MAKE) --no-print-directory test-san
	@$(MAKE) --no-print-directory fuzz-replay
	@$(MAKE) --no-print-directory test-clang-san
	@$(MAKE) --no-print-directory test-tsan

# The include discipline of docs/architecture.md (also the first step of check).
layers:
	@tests/check-layers

# A congestion-control algorithm, or a topology kind, is one file plus one registry line (also part of check).
toy-cc:
	@tests/toy-cc.sh

demo: deps
	@$(MAKE) -s --no-print-directory all
	./build/rocesim run scenarios/quickstart.ini -o results/quickstart

bench: deps
	@$(MAKE) -s --no-print-directory all build/memlat
	bench/run

# the bench's machine probe: memory latency by region size (bench/memlat.c)
build/memlat: bench/memlat.c
	@mkdir -p build
	$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -o $@ $<

clean:
	rm -rf build
