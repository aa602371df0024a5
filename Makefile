# ddpprof — build, dependencies and tests.
#   make deps    install what is missing (Debian packages)
#   make         build ./ddpprof
#   make test    build and run every test (unit and end to end)
#   make sanitize / make tsan   the same tests under ASan+UBSan / TSan

CC      ?= cc
BUILD   ?= build
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread -MMD -MP
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

.PHONY: all deps test unit-test e2e-test sanitize tsan clean bench

all: ddpprof

ddpprof: $(BUILD)/src/main.o $(BUILD)/libddpprof.a
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

# Every test binary runs even when an earlier one fails; the exit status says if any did.
test: ddpprof $(TEST_BIN)
	@fail=0; for t in $(TEST_BIN); do \
	  echo "== $$t"; DDPPROF=$(CURDIR)/ddpprof SCENARIOS=$(CURDIR)/scenarios $$t || fail=1; \
	done; \
	if [ $$fail -ne 0 ]; then echo "== SOME TESTS FAILED"; exit 1; fi; echo "== ALL TESTS PASSED"

sanitize:
	$(MAKE) BUILD=build-asan CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" test

tsan:
	$(MAKE) BUILD=build-tsan CFLAGS="-O1 -g -fsanitize=thread" test

bench: ddpprof
	./bench/allreduce_vs_peers.sh

clean:
	rm -rf build build-asan build-tsan ddpprof

-include $(LIB_OBJ:.o=.d) $(BUILD)/src/main.d
