# Every entry point of the project. Plain GNU make; `make V=1` shows commands,
# `make SAN=1 ...` builds with ASan+UBSan into build/san.
#
# Layout is wildcard-driven so a new file needs no Makefile edit:
#   proto/*.c                 -> $(B)/libproto.a          (pure library)
#   common/*.c                -> $(B)/libcommon.a         (I/O shared by daemons and CLI)
#   verifier/*.c              -> $(B)/libverifier.a + verifier (main in verifier/main.c)
#   verifier/attestctl/*.c    -> attestctl
#   attestd/*.c               -> $(B)/libattestd.a + attestd (main in attestd/main.c)
#   tests/lib/*.c             -> $(B)/libtesthelp.a       (test doubles: unit tests, tools, bench)
#   tests/unit/test_*.c       -> one test program each
#   tests/tools/*.c           -> one helper program each (list generator, load tools)
#   tests/fuzz/fuzz_*.c       -> libFuzzer targets (clang), `make fuzz`

SHELL := /bin/bash
CC ?= cc
CLANG ?= clang
BUILD ?= build
SAN ?=
V ?=
OPT ?= -O2

ifeq ($(V),)
Q := @
else
Q :=
endif

ifeq ($(SAN),1)
B := $(BUILD)/san
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
OPT := -O1
else
B := $(BUILD)/out
SANFLAGS :=
endif

PKGS := libcrypto libssl tss2-mu tss2-esys tss2-tctildr tss2-rc jansson libmicrohttpd libcurl sqlite3
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wformat=2 -Wvla -Wpointer-arith -Wno-unused-parameter
CFLAGS := -std=c11 -D_GNU_SOURCE -g $(OPT) $(WARN) $(SANFLAGS) -I. $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDFLAGS := $(SANFLAGS) $(EXTRA_LDFLAGS)
LIBS := $(PKG_LIBS) -lpthread -lm

PROTO_SRC := $(wildcard proto/*.c)
COMMON_SRC := $(wildcard common/*.c)
VERIFIER_LIB_SRC := $(filter-out verifier/main.c,$(wildcard verifier/*.c))
ATTESTCTL_SRC := $(wildcard verifier/attestctl/*.c)
ATTESTD_LIB_SRC := $(filter-out attestd/main.c,$(wildcard attestd/*.c))
TESTLIB_SRC := $(wildcard tests/lib/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
TOOL_SRC := $(wildcard tests/tools/*.c)
BENCH_SRC := $(wildcard bench/*.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)

obj = $(patsubst %.c,$(B)/obj/%.o,$(1))

PROTO_LIB := $(B)/libproto.a
COMMON_LIB := $(B)/libcommon.a
VERIFIER_LIB := $(B)/libverifier.a
ATTESTD_LIB := $(B)/libattestd.a
TESTLIB := $(B)/libtesthelp.a
BINS := $(if $(wildcard verifier/main.c),$(B)/verifier) \
	$(if $(ATTESTCTL_SRC),$(B)/attestctl) \
	$(if $(wildcard attestd/main.c),$(B)/attestd)
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
TOOL_BINS := $(patsubst tests/tools/%.c,$(B)/tools/%,$(TOOL_SRC))
BENCH_BINS := $(patsubst bench/%.c,$(B)/bench/%,$(BENCH_SRC))
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(FUZZ_SRC))

.PHONY: all deps check test test-unit test-cross test-integration test-vm test-e2e \
	fuzz fuzz-build demo bench vm clean
.DEFAULT_GOAL := all
.SECONDARY:

all: $(PROTO_LIB) $(COMMON_LIB) $(BINS) $(UNIT_BINS) $(TOOL_BINS) $(BENCH_BINS)

# --- Debian packages, listed once in deps.txt -------------------------------
deps:
	@scripts/deps.sh deps.txt

# --- compile ----------------------------------------------------------------
$(B)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(PROTO_LIB): $(call obj,$(PROTO_SRC))
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

# common/ may use proto/ (dynbuf, limits); it is linked before libproto.
$(COMMON_LIB): $(call obj,$(COMMON_SRC))
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

# The web page is embedded with .incbin, which -MMD does not see.
$(B)/obj/verifier/handlers_ui.o: $(wildcard verifier/ui/*)

$(VERIFIER_LIB): $(call obj,$(VERIFIER_LIB_SRC))
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(ATTESTD_LIB): $(call obj,$(ATTESTD_LIB_SRC))
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

# Never linked into verifier, attestd or attestctl.
$(TESTLIB): $(call obj,$(TESTLIB_SRC))
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(B)/verifier: $(call obj,verifier/main.c) $(VERIFIER_LIB) $(COMMON_LIB) $(PROTO_LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/attestctl: $(call obj,$(ATTESTCTL_SRC)) $(VERIFIER_LIB) $(COMMON_LIB) $(PROTO_LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/attestd: $(call obj,attestd/main.c) $(ATTESTD_LIB) $(COMMON_LIB) $(PROTO_LIB)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# Unit tests may use any library module; the archives keep unused objects out.
$(B)/tests/%: $(call obj,tests/unit/%.c) $(TESTLIB) $(VERIFIER_LIB) $(ATTESTD_LIB) $(COMMON_LIB) $(PROTO_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/tools/%: $(call obj,tests/tools/%.c) $(TESTLIB) $(VERIFIER_LIB) $(ATTESTD_LIB) $(COMMON_LIB) $(PROTO_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(B)/bench/%: $(call obj,bench/%.c) $(TESTLIB) $(VERIFIER_LIB) $(ATTESTD_LIB) $(COMMON_LIB) $(PROTO_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

# --- fuzzing (clang + libFuzzer, always with ASan/UBSan) ----------------------
# With the project's warnings and -Werror. A target links proto/ and the verifier's library
# (verifier/*.c but main.c), common/ and the tests' library (softtpm), each compiled here with the fuzz flags
# (coverage without libFuzzer's main) into archives, so a target pulls only what it uses.
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined $(WARN) -I. $(PKG_CFLAGS) -D_GNU_SOURCE -std=c11
FUZZ_LIB_FLAGS := $(subst -fsanitize=fuzzer,-fsanitize=fuzzer-no-link,$(FUZZ_FLAGS))
FUZZ_OBJ := $(BUILD)/fuzz/obj
fuzz_obj = $(patsubst %.c,$(FUZZ_OBJ)/%.o,$(1))
FUZZ_LIBS := $(BUILD)/fuzz/libtesthelp.a $(BUILD)/fuzz/libverifier.a $(BUILD)/fuzz/libcommon.a \
	$(BUILD)/fuzz/libproto.a

$(FUZZ_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZCC  $<")
	$(Q)$(CLANG) $(FUZZ_LIB_FLAGS) -MMD -MP -c $< -o $@

$(FUZZ_OBJ)/verifier/handlers_ui.o: $(wildcard verifier/ui/*)

$(BUILD)/fuzz/libproto.a: $(call fuzz_obj,$(PROTO_SRC))
$(BUILD)/fuzz/libverifier.a: $(call fuzz_obj,$(VERIFIER_LIB_SRC))
$(BUILD)/fuzz/libcommon.a: $(call fuzz_obj,$(wildcard common/*.c))
$(BUILD)/fuzz/libtesthelp.a: $(call fuzz_obj,$(TESTLIB_SRC))
$(BUILD)/fuzz/lib%.a:
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_LIBS) $(wildcard proto/*.h verifier/*.h common/*.h tests/lib/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CLANG) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_LIBS) $(LIBS)

fuzz-build: $(FUZZ_BINS)

# `make fuzz` runs each target briefly (FUZZ_SECONDS each) from its corpus.
FUZZ_SECONDS ?= 20
fuzz: fuzz-build
	@tests/fuzz/run.sh $(BUILD)/fuzz $(FUZZ_SECONDS)

# --- static checks -----------------------------------------------------------
# `make check`: banned functions, shellcheck on every script, proto/ includes only proto/
# (scripts/check.sh), and every fuzz target built with the warnings and -Werror.
check: fuzz-build
	@scripts/check.sh

# --- tests ------------------------------------------------------------------
# Every layer prints `N passed, N failed`; tests/run sums them into the final line.
export B BUILD
# `make test` and `make demo` install what they need first (a no-op when present).
test:
	@scripts/deps.sh deps.txt
	@$(MAKE) --no-print-directory all fuzz-build
	@scripts/check.sh
	@tests/run $(TEST_LAYERS)

TEST_LAYERS ?= unit fuzz-corpus cross integration attacks faults vm e2e bench

test-unit: all
	@tests/run unit
test-cross: all
	@tests/run cross
test-integration: all
	@tests/run integration
test-vm: all
	@tests/run vm
test-e2e: all
	@tests/run e2e

demo:
	@scripts/deps.sh deps.txt
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

bench:
	@$(MAKE) --no-print-directory all BUILD=build/bench OPT=-O3
	@bench/run.sh

vm: all
	@vm/build-kernel.sh && vm/build-rootfs.sh

clean:
	rm -rf $(BUILD)/out $(BUILD)/san $(BUILD)/fuzz

-include $(shell find $(B)/obj $(FUZZ_OBJ) -name '*.d' 2>/dev/null)
