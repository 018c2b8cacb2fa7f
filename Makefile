# warren - build, test, demo, bench. See README.md.
#   make            build/warren (optimised)
#   make check      deps, then a sanitizer build in build/san/ (ASan + UBSan), unit and
#                   integration tests against it; ends with "N passed, N failed"
#   make demo       deps, build, run the demo job
#   make bench      deps, build, warren beside bubblewrap and runc
#   make soak       deps, build, 10 000 runs then 1 000 kill -9's of warren: nothing left (bench/soak)
CC      ?= cc
PKGS    := jansson libseccomp libcap yaml-0.1 libnl-route-3.0
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
LIBOBJS := $(filter-out $(BUILD)/obj/main.o,$(OBJS))
UNIT    := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(wildcard tests/unit/test_*.c))

.PHONY: all deps check unit demo bench soak clean

all: $(BUILD)/warren

$(BUILD)/warren: $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/%.o: src/%.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/unit/%: tests/unit/%.c $(LIBOBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBOBJS) $(LDLIBS) -lcmocka

# Install the Debian packages the build, the tests and the demo need (as root, once).
deps:
	@scripts/install-deps

# Tests run against a build with AddressSanitizer and UndefinedBehaviorSanitizer.
check: deps
	$(MAKE) BUILD=build/san CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" build/san/warren \
		$(patsubst tests/unit/%.c,build/san/unit/%,$(wildcard tests/unit/test_*.c))
	@WARREN=$(CURDIR)/build/san/warren tests/run-all $(patsubst tests/unit/%.c,build/san/unit/%,$(wildcard tests/unit/test_*.c))

unit: $(UNIT)
	@tests/run-all --unit-only $(UNIT)

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
	rm -rf build/obj build/unit build/warren build/san
