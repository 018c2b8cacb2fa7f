# warren - build, test, demo, bench. See README.md.
CC      ?= cc
PKGS    := jansson libseccomp libcap yaml-0.1
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -Isrc $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
override LDLIBS += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer

SRCS    := $(shell find src -name '*.c' | sort)
OBJS    := $(SRCS:src/%.c=build/obj/%.o)
LIBOBJS := $(filter-out build/obj/main.o,$(OBJS))
UNIT    := $(patsubst tests/unit/%.c,build/unit/%,$(wildcard tests/unit/test_*.c))

.PHONY: all deps check unit integration demo bench clean san

all: build/warren

build/warren: $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

build/obj/%.o: src/%.c $(wildcard src/*/*.h) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

build/unit/%: tests/unit/%.c $(LIBOBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBOBJS) $(LDLIBS) -lcmocka

# Install the Debian packages the build, the tests and the demo need (as root, once).
deps:
	@scripts/install-deps

# Tests build with AddressSanitizer and UndefinedBehaviorSanitizer.
check: deps
	$(MAKE) clean-obj
	$(MAKE) all $(UNIT) CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)"
	@tests/run-all $(UNIT)

unit: $(UNIT)
	@tests/run-all --unit-only $(UNIT)

demo: deps all
	@scripts/demo

bench: deps all
	@bench/run

clean-obj:
	rm -rf build/obj build/unit build/warren

clean: clean-obj
	rm -rf build
