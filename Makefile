# ddpprof — build, dependencies and tests.
#   make         build ./ddpprof (builds only: installing is scripts/bootstrap.sh's, or make deps)
#   make deps    install what is missing (Debian packages, Nsight Systems without NVTX3 headers)
#   make test    install what the tests need if missing, build and run every test
#   make sanitize / make tsan   the same tests under ASan+UBSan / TSan

CC      ?= cc
BUILD   ?= build
DDPPROF_BIN ?= ddpprof
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -pthread -MMD -MP
# Every project include is written from the repository's root ("engine/ddp/reducer.h").
CPPFLAGS += -I.

# NVTX is header-only. The NVTX3 headers come from the CUDA toolkit when there is one,
# else from Debian's nsight-systems-target (`make deps` installs it when neither is
# found); with neither, the ranges compile out and a run is invisible in Nsight Systems.
CUDA_HOME ?= /usr/local/cuda
NVTX_INC := $(patsubst %/nvtx3/nvToolsExt.h,%,$(firstword \
              $(wildcard $(CUDA_HOME)/include/nvtx3/nvToolsExt.h) \
              $(wildcard /usr/lib/*/nsight-systems/target-linux-*/nvtx/include/nvtx3/nvToolsExt.h)))
ifneq ($(NVTX_INC),)
  CPPFLAGS += -DDDPPROF_HAVE_NVTX -isystem $(NVTX_INC)
else
  # Said whenever the NVTX wrappers are compiled, where it matters.
  $(BUILD)/profiler/nvtx_ranges.o: CPPFLAGS += $(info ddpprof: note: no NVTX3 headers (neither $(CUDA_HOME)/include/nvtx3 nor nsight-systems-target's): NVTX ranges compiled out, runs will not show in Nsight Systems)
endif

PKGS    := sqlite3 inih openblas jansson yajl zlib libcrypto
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -ldl -lm
CPPFLAGS += $(shell pkg-config --cflags $(PKGS) 2>/dev/null)

# The cuda backend (engine/cuda/) is built wherever the CUDA toolkit is found, GPU or not.
HAVE_CUDA := $(if $(wildcard $(CUDA_HOME)/include/cuda_runtime_api.h),1,)
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lcupti -lnccl -lstdc++
ifeq ($(HAVE_CUDA),1)
  CPPFLAGS += -DDDPPROF_HAVE_CUDA
  LDLIBS += $(CUDA_LIBS)
  # cuBLAS is loaded by a cuda rank when it starts (engine/cuda/cuda_blas.h), not linked.
  $(BUILD)/engine/cuda/cuda_blas.o: CPPFLAGS += -DDDPPROF_CUDA_LIB_DIR='"$(CUDA_HOME)/lib64"'
  $(BUILD)/engine/cuda/%.o $(BUILD)/tests/test_cupti_decode $(BUILD)/tests/test_nccl_id $(BUILD)/tests/test_cuda_plan $(BUILD)/tests/test_cuda_backend $(BUILD)/tests/test_cuda_gpu: CPPFLAGS += -isystem $(CUDA_HOME)/include
endif
# The backend's kernels (engine/cuda/*.cu): machine code for A100 (sm_80) and H100/H200
# (sm_90), plus PTX that newer GPUs compile at load time.
NVCC       ?= $(CUDA_HOME)/bin/nvcc
NVCCFLAGS  ?= -O2
CUDA_ARCHS := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
              -gencode arch=compute_90,code=compute_90
$(BUILD)/engine/cuda/%.o: engine/cuda/%.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -std=c++17 $(CUDA_ARCHS) -I. -MMD -MP \
	  -Xcompiler -Wall,-Wextra,-Werror,-fPIC -c -o $@ $<

# engine/ keeps the contracts at its root; each folder below it is one concern.
ENGINE_DIRS := scenario ddp workload launch cost predict cpu sim
LIB_SRC := $(wildcard common/*.c engine/*.c $(ENGINE_DIRS:%=engine/%/*.c) profiler/*.c profiler/import/*.c reports/*.c) $(filter-out src/main.c,$(wildcard src/*.c)) \
           $(if $(HAVE_CUDA),$(wildcard engine/cuda/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o) $(if $(HAVE_CUDA),$(patsubst %.cu,$(BUILD)/%.o,$(wildcard engine/cuda/*.cu)))
TEST_SRC := $(filter-out $(if $(HAVE_CUDA),,tests/test_cupti_decode.c tests/test_nccl_id.c tests/test_cuda_plan.c tests/test_cuda_backend.c tests/test_cuda_gpu.c),$(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

.PHONY: all deps build-all run-tests test sanitize tsan stress clean bench

# Plain `make` builds and installs nothing; scripts/bootstrap.sh installs what is missing
# first.  The test targets below do install it (`deps`), then build in a sub-make so that
# pkg-config is asked only once the libraries are there: `make test` is the one command CI
# runs on a clean clone.
all: build-all

build-all: $(DDPPROF_BIN)

$(DDPPROF_BIN): $(BUILD)/src/main.o $(BUILD)/libddpprof.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/libddpprof.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# Every test binary is its file, the tests' shared harness (tests/harness.h) and the library.
TEST_HARNESS := $(BUILD)/tests/harness.o
$(BUILD)/tests/%: tests/%.c $(TEST_HARNESS) $(BUILD)/libddpprof.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Itests -o $@ $< $(TEST_HARNESS) $(BUILD)/libddpprof.a $(LDLIBS) -lcmocka

# Installs the Debian packages that are missing (needs root or sudo), and Nsight Systems
# (nsys and its NVTX3 headers) when no NVTX3 headers were found; if that install fails,
# the build goes on with NVTX compiled out.
deps:
	@./scripts/install-deps.sh
ifeq ($(NVTX_INC),)
	@CUDA_HOME="$(CUDA_HOME)" ./scripts/install-nsys.sh || echo "ddpprof: Nsight Systems could not be installed (above); building without NVTX" >&2
endif

# Every test binary, every command README.md shows, then a bounded 20 s of fuzzing the
# scenario reader and the importers.  Each step runs whatever the one before did; the last
# line is the verdict, counting what ran, passed, failed and was skipped (tests/verdict.sh).
TEST_LOGS := $(BUILD)/test-logs
test: deps
	@mkdir -p $(TEST_LOGS) && rm -f $(TEST_LOGS)/*.log $(TEST_LOGS)/*.rc
	@$(MAKE) --no-print-directory run-tests || true
	@DDPPROF=$(CURDIR)/$(DDPPROF_BIN) sh tests/readme_commands.sh 2>&1 | tee $(TEST_LOGS)/readme.log
	@$(MAKE) --no-print-directory fuzz-short || true
	@sh tests/verdict.sh $(TEST_LOGS)

# Every test binary runs even when an earlier one fails; the exit status says if any did,
# and the last lines name each failed binary and its failed tests (a log's tail shows them).
run-tests: $(DDPPROF_BIN) $(TEST_BIN)
	@mkdir -p $(BUILD)/test-logs; failed=""; for t in $(TEST_BIN); do \
	  log=$(BUILD)/test-logs/$$(basename $$t).log; rm -f $$log.rc; \
	  echo "== $$t"; { DDPPROF=$(CURDIR)/$(DDPPROF_BIN) SCENARIOS=$(CURDIR)/scenarios $$t 2>&1; echo $$? > $$log.rc; } | tee $$log; \
	  [ "$$(cat $$log.rc 2>/dev/null)" = 0 ] || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "== SOME TESTS FAILED"; for t in $$failed; do \
	  echo "== failed: $$t (exit $$(cat $(BUILD)/test-logs/$$(basename $$t).log.rc))"; \
	  grep -E '^\[  (FAILED|ERROR) +\] [a-z_]' $(BUILD)/test-logs/$$(basename $$t).log | awk '!seen[$$0]++ { print "==   " $$0 }'; \
	done; exit 1; fi; echo "== ALL TESTS PASSED"

# Sanitizer builds go to their own directory and binary, leaving ./ddpprof alone.
# nsys injects its own libraries ahead of the ASan runtime; the order check is moot there.
sanitize: deps
	STRESS_TRIAL_LIMIT_S=120 DDPPROF_TEST_SLOWDOWN=4 ASAN_OPTIONS=verify_asan_link_order=0 $(MAKE) BUILD=build-asan DDPPROF_BIN=build-asan/ddpprof CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" run-tests

# Nsight Systems' injection library (loaded only in the nsys test) has races of its own.
tsan: deps
	STRESS_TRIAL_LIMIT_S=120 DDPPROF_TEST_SLOWDOWN=4 TSAN_OPTIONS=suppressions=$(CURDIR)/tests/tsan.supp $(MAKE) BUILD=build-tsan DDPPROF_BIN=build-tsan/ddpprof CFLAGS="-O1 -g -fsanitize=thread" run-tests

# Hundreds of runs aborted at random moments (signals and every [fault] mode), under
# ASan+UBSan and under TSan; `make test` runs a bounded 40 of them on the plain build.
STRESS_RUNS ?= 300
stress: deps
	ASAN_OPTIONS=verify_asan_link_order=0 $(MAKE) --no-print-directory BUILD=build-asan DDPPROF_BIN=build-asan/ddpprof CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" build-asan/ddpprof build-asan/tests/test_stress
	$(MAKE) --no-print-directory BUILD=build-tsan DDPPROF_BIN=build-tsan/ddpprof CFLAGS="-O1 -g -fsanitize=thread" build-tsan/ddpprof build-tsan/tests/test_stress
	STRESS_TRIAL_LIMIT_S=120 DDPPROF_TEST_SLOWDOWN=4 ASAN_OPTIONS=verify_asan_link_order=0 STRESS_RUNS=$(STRESS_RUNS) DDPPROF=$(CURDIR)/build-asan/ddpprof SCENARIOS=$(CURDIR)/scenarios build-asan/tests/test_stress
	STRESS_TRIAL_LIMIT_S=120 DDPPROF_TEST_SLOWDOWN=4 TSAN_OPTIONS=suppressions=$(CURDIR)/tests/tsan.supp STRESS_RUNS=$(STRESS_RUNS) DDPPROF=$(CURDIR)/build-tsan/ddpprof SCENARIOS=$(CURDIR)/scenarios build-tsan/tests/test_stress

bench: all
	./bench/allreduce_vs_peers.sh
	./bench/profiler_overhead.sh

clean:
	rm -rf build build-asan build-tsan ddpprof

-include $(LIB_OBJ:.o=.d) $(BUILD)/src/main.d $(TEST_HARNESS:.o=.d) $(TEST_BIN:=.d)

# Fuzzing the scenario reader with libFuzzer (clang, and on Debian libclang-rt-dev):
# `make fuzz` runs FUZZ_SECONDS, `make fuzz-short` 20 s.  New inputs collect in
# $(BUILD)/fuzz/corpus and crashes in $(BUILD)/fuzz/; a crash, once fixed, goes to
# tests/fuzz/seeds/, which test_bad_inputs replays.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 300
FUZZ_DIR     := $(BUILD)/fuzz
# The scenario check reads record.spans_ranks with profiler/span_select.c (libc only).
FUZZ_SRC     := tests/fuzz/fuzz_scenario.c $(wildcard engine/scenario/*.c) profiler/span_select.c $(wildcard common/*.c)
FUZZ_FLAGS   := -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -I. -Itests/fuzz \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

.PHONY: fuzz fuzz-short
$(FUZZ_DIR)/fuzz_scenario: $(FUZZ_SRC) $(wildcard engine/scenario/*.h) tests/fuzz/scenario_props.h
	@mkdir -p $(FUZZ_DIR)/corpus
	$(FUZZ_CC) $(FUZZ_FLAGS) $(shell pkg-config --cflags inih 2>/dev/null) -o $@ $(FUZZ_SRC) \
	  $(shell pkg-config --libs inih 2>/dev/null || echo -linih)

# The importer's readers (profiler/import/) likewise, each input read as a trace and
# analysed into spans: PyTorch profiler JSON (seeds: tests/fuzz/seeds_trace_json/ and a
# small job kineto_gen.py writes) and Nsight Systems SQLite (seeds: the same job as nsys
# exports).  Crashes go to $(FUZZ_DIR)/import-.
FUZZ_IMPORT_SRC := $(filter-out profiler/import/import_job.c profiler/import/import_files.c,$(wildcard profiler/import/*.c)) \
                   profiler/strtab.c profiler/span.c $(wildcard common/*.c)
$(FUZZ_DIR)/fuzz_trace_json $(FUZZ_DIR)/fuzz_nsys_sqlite: $(FUZZ_DIR)/%: tests/fuzz/%.c $(FUZZ_IMPORT_SRC) \
    $(wildcard profiler/import/*.h) tests/fuzz/fuzz_import.h
	@mkdir -p $(FUZZ_DIR)/corpus_$*
	$(FUZZ_CC) $(FUZZ_FLAGS) $(shell pkg-config --cflags yajl 2>/dev/null) -o $@ $< \
	  $(FUZZ_IMPORT_SRC) $(shell pkg-config --libs yajl zlib libcrypto sqlite3 2>/dev/null || echo -lyajl -lz -lcrypto -lsqlite3)
$(FUZZ_DIR)/seeds_import/made: tests/import/kineto_gen.py
	@rm -rf $(FUZZ_DIR)/seeds_import && mkdir -p $(FUZZ_DIR)/seeds_import
	/usr/bin/python3 tests/import/kineto_gen.py --out $(FUZZ_DIR)/seeds_import/json --world 1 --steps 2 --layers 2 --orphans 1 >/dev/null
	/usr/bin/python3 tests/import/kineto_gen.py --out $(FUZZ_DIR)/seeds_import/nsys --world 1 --steps 2 --layers 2 --format nsys >/dev/null
	rm -f $(FUZZ_DIR)/seeds_import/*/expected.txt && touch $@

fuzz: $(FUZZ_DIR)/fuzz_scenario $(FUZZ_DIR)/fuzz_trace_json $(FUZZ_DIR)/fuzz_nsys_sqlite $(FUZZ_DIR)/seeds_import/made
	$< -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
	  -print_final_stats=1 -dict=tests/fuzz/scenario.dict -artifact_prefix=$(FUZZ_DIR)/ \
	  $(FUZZ_DIR)/corpus tests/fuzz/seeds
	$(FUZZ_DIR)/fuzz_trace_json -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/import- \
	  $(FUZZ_DIR)/corpus_fuzz_trace_json tests/fuzz/seeds_trace_json $(FUZZ_DIR)/seeds_import/json
	$(FUZZ_DIR)/fuzz_nsys_sqlite -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
	  -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/import- \
	  $(FUZZ_DIR)/corpus_fuzz_nsys_sqlite $(FUZZ_DIR)/seeds_import/nsys

# One line of its own: libFuzzer's statistics go to $(TEST_LOGS)/fuzz.log, the exit
# status to fuzz.rc (which tests/verdict.sh counts).
fuzz-short:
	@mkdir -p $(TEST_LOGS); $(MAKE) --no-print-directory fuzz FUZZ_SECONDS=20 > $(TEST_LOGS)/fuzz.log 2>&1; \
	  rc=$$?; echo $$rc > $(TEST_LOGS)/fuzz.rc; \
	  runs=$$(sed -n 's/^Done \([0-9][0-9]*\) runs in.*/\1/p' $(TEST_LOGS)/fuzz.log | awk '{ s += $$1 } END { print s + 0 }'); \
	  if [ $$rc = 0 ]; then echo "== fuzz: 3 readers, 20 s each, $$runs inputs, no crash (statistics: $(TEST_LOGS)/fuzz.log)"; \
	  else echo "== fuzz FAILED (exit $$rc; crashes in $(FUZZ_DIR)/, statistics and the end: $(TEST_LOGS)/fuzz.log)"; \
	  tail -n 5 $(TEST_LOGS)/fuzz.log | sed 's/^/   | /'; fi; exit $$rc

# The HTML report's end-to-end test decodes Chromium's screenshot with libpng.
$(BUILD)/tests/test_html_report: LDLIBS += $(shell pkg-config --libs libpng 2>/dev/null || echo -lpng)
