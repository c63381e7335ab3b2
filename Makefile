# rocesim — build, test, demo, bench.
# Sources are found by wildcard: a new module in sim/, models/, analysis/ or replay/ and a new
# tests/test_*.c suite are built without editing this file.

CC      ?= gcc
PKGS    := glib-2.0 json-glib-1.0 libpcap
CFLAGS_COMMON := -std=gnu11 -Wall -Wextra -Werror -g -I. $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -libverbs -lrdmacm -lm
TEST_LDLIBS := -lcunit

CFLAGS_RELEASE := $(CFLAGS_COMMON) -O2
CFLAGS_SAN     := $(CFLAGS_COMMON) -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined

LIB_SRCS  := $(filter-out sim/main.c,$(wildcard sim/*.c models/*.c analysis/*.c replay/*.c))
HDRS      := $(wildcard sim/*.h models/*.h analysis/*.h replay/*.h tests/*.h)
TEST_SRCS := $(wildcard tests/test_*.c)

REL_OBJS  := $(patsubst %.c,build/obj/%.o,$(LIB_SRCS))
SAN_OBJS  := $(patsubst %.c,build/san/%.o,$(LIB_SRCS))
TESTS_REL := $(patsubst tests/%.c,build/tests/%,$(TEST_SRCS))
TESTS_SAN := $(patsubst tests/%.c,build/tests-san/%,$(TEST_SRCS))

# Debian packages the project needs; `make deps` installs the missing ones.
DEB_PKGS := build-essential pkg-config libglib2.0-dev libjson-glib-dev libpcap-dev \
            libibverbs-dev librdmacm-dev libcunit1-dev gnuplot-nox
DEB_CHECK_PKGS := tshark chromium openmpi-bin libopenmpi-dev iproute2

.PHONY: all deps deps-check check test test-san validate validate-fast demo bench clean
all: build/rocesim

deps:
	@missing=""; for p in $(DEB_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	fi

# Extra tools used only by tests (tshark, headless chromium, MPI, netns).
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
	@$(CC) $(CFLAGS_RELEASE) -c $< -o $@

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

build/rocesim: sim/main.c build/librocesim.a
	@echo "  LD      $@"
	@$(CC) $(CFLAGS_RELEASE) $< build/librocesim.a $(LDLIBS) -o $@

build/rocesim-san: sim/main.c build/librocesim-san.a
	@echo "  LD san  $@"
	@$(CC) $(CFLAGS_SAN) $< build/librocesim-san.a $(LDLIBS) -o $@

build/tests/%: tests/%.c build/librocesim.a tests/testutil.h
	@mkdir -p build/tests
	@echo "  LD      $@"
	@$(CC) $(CFLAGS_RELEASE) $< build/librocesim.a $(LDLIBS) $(TEST_LDLIBS) -o $@

build/tests-san/%: tests/%.c build/librocesim-san.a tests/testutil.h
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

# Every suite, release build then sanitizer build; tests/run-suites prints the closing tally.
test: build/rocesim $(TESTS_REL)
	@ROCESIM=$(CURDIR)/build/rocesim tests/run-suites build/tests

test-san: build/rocesim-san $(TESTS_SAN)
	@ROCESIM=$(CURDIR)/build/rocesim-san ASAN_OPTIONS=detect_leaks=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 tests/run-suites build/tests-san

check: deps-check
	@$(MAKE) -s --no-print-directory all
	@$(MAKE) --no-print-directory validate-fast
	@$(MAKE) --no-print-directory test
	@$(MAKE) --no-print-directory test-san

demo: deps
	@$(MAKE) -s --no-print-directory all
	./build/rocesim run scenarios/quickstart.ini -o results/quickstart

bench: deps
	@$(MAKE) -s --no-print-directory all
	bench/run

clean:
	rm -rf build
