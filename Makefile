# ddpprof — build, dependencies and tests.
#   make deps    install what is missing (Debian packages)
#   make         build ./ddpprof
#   make test    build and run every test (unit and end to end)
#   make sanitize / make tsan   the same tests under ASan+UBSan / TSan

CC      ?= cc
BUILD   ?= build
DDPPROF_BIN ?= ddpprof
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread -MMD -MP
CPPFLAGS += -Iengine -Iprofiler -Ireports -Isrc

# NVTX is header-only; without the CUDA toolkit's headers the ranges compile out.
CUDA_HOME ?= /usr/local/cuda
ifneq ($(wildcard $(CUDA_HOME)/include/nvtx3/nvToolsExt.h),)
  CPPFLAGS += -DDDPPROF_HAVE_NVTX -isystem $(CUDA_HOME)/include
endif

PKGS    := sqlite3 inih openblas jansson
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -ldl -lm
CPPFLAGS += $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

LIB_SRC := $(wildcard engine/*.c profiler/*.c reports/*.c) $(filter-out src/main.c,$(wildcard src/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

.PHONY: all deps build-all run-tests test sanitize tsan clean bench

# The public targets install what is missing first, then build in a sub-make, so that
# pkg-config is asked only once the libraries are there.
all: deps
	@$(MAKE) --no-print-directory build-all

build-all: $(DDPPROF_BIN)

$(DDPPROF_BIN): $(BUILD)/src/main.o $(BUILD)/libddpprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libddpprof.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/%.c $(BUILD)/libddpprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -o $@ $< $(BUILD)/libddpprof.a $(LDLIBS) -lcmocka

# Installs the Debian packages that are missing (needs root or sudo).
deps:
	@./scripts/install-deps.sh

test: deps
	@$(MAKE) --no-print-directory run-tests

# Every test binary runs even when an earlier one fails; the exit status says if any did.
run-tests: $(DDPPROF_BIN) $(TEST_BIN)
	@fail=0; for t in $(TEST_BIN); do \
	  echo "== $$t"; DDPPROF=$(CURDIR)/$(DDPPROF_BIN) SCENARIOS=$(CURDIR)/scenarios $$t || fail=1; \
	done; \
	if [ $$fail -ne 0 ]; then echo "== SOME TESTS FAILED"; exit 1; fi; echo "== ALL TESTS PASSED"

# Sanitizer builds go to their own directory and binary, leaving ./ddpprof alone.
# nsys injects its own libraries ahead of the ASan runtime; the order check is moot there.
sanitize: deps
	ASAN_OPTIONS=verify_asan_link_order=0 $(MAKE) BUILD=build-asan DDPPROF_BIN=build-asan/ddpprof CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" run-tests

# Nsight Systems' injection library (loaded only in the nsys test) has races of its own.
tsan: deps
	TSAN_OPTIONS=suppressions=$(CURDIR)/tests/tsan.supp $(MAKE) BUILD=build-tsan DDPPROF_BIN=build-tsan/ddpprof CFLAGS="-O1 -g -fsanitize=thread" run-tests

bench: all
	./bench/allreduce_vs_peers.sh
	./bench/profiler_overhead.sh

clean:
	rm -rf build build-asan build-tsan ddpprof

-include $(LIB_OBJ:.o=.d) $(BUILD)/src/main.d
