# warren - build, test, demo, bench. See README.md.
#   make            build/warren (optimised)
#   make check      deps, then a sanitizer build in build/san/ (ASan + UBSan), each fuzz target
#                   for 5 s (fuzz-smoke), unit and integration tests against the build; ends
#                   with "N passed, N failed"
#   make demo       deps, build, run the demo job
#   make bench      deps, build, warren beside bubblewrap and runc
#   make soak       deps, build, 10 000 runs then 1 000 kill -9's of warren: nothing left (bench/soak)
#   make fuzz       deps, the libFuzzer targets of tests/fuzz/ in build/fuzz/ (clang, ASan +
#                   UBSan), each run FUZZ_SECONDS (60) over its corpus; make fuzz-smoke: 5 s each
CC      ?= cc
PKGS    := jansson libseccomp libcap yaml-0.1 libnl-route-3.0 sqlite3
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -Isrc $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# the libraries are linked statically: each shared library costs every run its loading
override LDLIBS += -Wl,-Bstatic $(shell pkg-config --libs $(PKGS) 2>/dev/null) -Wl,-Bdynamic -lm
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer

# BUILD is where objects and binaries go: build (optimised) or build/san (sanitizers)
BUILD   ?= build
SRCS    := $(shell find src -name '*.c' | sort)
HDRS    := $(shell find src -name '*.h')
OBJS    := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
# the console's files (src/serve/console/), compiled in as byte arrays by scripts/embed-assets
CONSOLE := $(sort $(wildcard src/serve/console/*))
OBJS    += $(BUILD)/obj/gen/console_assets.o
LIBOBJS := $(filter-out $(BUILD)/obj/main.o,$(OBJS))
UNIT    := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(wildcard tests/unit/test_*.c))
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer

.PHONY: all deps check unit demo bench soak clean fuzz fuzz-smoke

all: $(BUILD)/warren

$(BUILD)/warren: $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/%.o: src/%.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/gen/console_assets.c: $(CONSOLE) scripts/embed-assets
	@mkdir -p $(dir $@)
	scripts/embed-assets $(CONSOLE) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/console_assets.o: $(BUILD)/gen/console_assets.c src/serve/console.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/unit/%: tests/unit/%.c $(LIBOBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBOBJS) $(LDLIBS) -lcmocka

# A libFuzzer target links the project's objects built by clang (BUILD=build/fuzz); the resolver's
# includes dns.c itself to reach its static handlers.
$(BUILD)/fuzz_dns: LIBOBJS := $(filter-out $(BUILD)/obj/net/dns.o,$(LIBOBJS))
$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(LIBOBJS)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(LIBOBJS) $(LDLIBS)

# Install the Debian packages the build, the tests and the demo need (as root, once).
deps:
	@scripts/install-deps

# Tests run against a build with AddressSanitizer and UndefinedBehaviorSanitizer.
check: deps
	$(MAKE) BUILD=build/san CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" build/san/warren \
		$(patsubst tests/unit/%.c,build/san/unit/%,$(wildcard tests/unit/test_*.c))
	@$(MAKE) --no-print-directory fuzz-smoke
	@WARREN=$(CURDIR)/build/san/warren tests/run-all $(patsubst tests/unit/%.c,build/san/unit/%,$(wildcard tests/unit/test_*.c))

unit: $(UNIT)
	@tests/run-all --unit-only $(UNIT)

fuzz: deps
	$(MAKE) BUILD=build/fuzz CC=clang CFLAGS="$(FUZZ_FLAGS)" $(FUZZ_TARGETS:%=build/fuzz/fuzz_%)
	@tests/fuzz/run $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=5

demo: deps all
	@scripts/demo

bench: deps all
	@bench/run
	@bench/refused-writes

# Many runs (every limit, kills, --net nat, rootless), then kill -9 of warren at random
# moments and gc: nothing may be left. SOAK_RUNS, SOAK_KILLS, SOAK_PAR: see bench/soak.
soak: deps all
	@bench/soak

clean:
	rm -rf build/obj build/gen build/unit build/warren build/san build/fuzz
