# SPDX-License-Identifier: Apache-2.0
# warren - build, test, demo, bench. See README.md.
#   make            build/warren (optimised) and the man pages (build/man, scdoc)
#   make install    warren, its man pages, bash and zsh completion, the docs and the example
#                   job under DESTDIR/PREFIX (/usr/local); make uninstall removes them
#   make layering   fail on an include from a layer above (DESIGN.md's order; run by make check)
#   make check      deps, then a sanitizer build in build/san/ (ASan + UBSan), each fuzz target
#                   for 5 s (fuzz-smoke), unit and integration tests against the build; ends
#                   with "N passed, N failed"
#   make demo       deps, build, run the demo job
#   make bench      deps, build, warren beside bubblewrap and runc: start-up, then real work
#   make soak       deps, build, 10 000 runs then 1 000 kill -9's of warren: nothing left (bench/soak)
#   make fuzz       deps, the libFuzzer targets of tests/fuzz/ in build/fuzz/ (clang, ASan +
#                   UBSan), each run FUZZ_SECONDS (60) over its corpus; make fuzz-smoke: 5 s each
#   make check-v2   deps, the sanitizer build, then the cgroup, limits and job tests in a qemu guest
#                   that is a pure cgroup v2 host (tests/v2/check; TESTS= picks the scripts)
CC      ?= cc
PKGS    := jansson libseccomp libcap yaml-0.1 libnl-route-3.0 sqlite3
# headers only: loaded with dlopen where they are used (src/util/dl.h), by no other command
DL_PKGS := liblzma libzstd libarchive nettle
CFLAGS  ?= -O2 -g
override CFLAGS += -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -Isrc $(shell pkg-config --cflags $(PKGS) $(DL_PKGS) 2>/dev/null)
# The version: debian/changelog's first entry is its one source (warren --version, the package).
VERSION := $(shell sed -n '1s/^[^(]*(\([^)]*\)).*/\1/p' debian/changelog)
# the libraries are linked statically: each shared library costs every run its loading. Those
# of images (libarchive, nettle's SHA-256) and of the vm driver's kernel files (liblzma,
# libzstd) are loaded with dlopen when an image or a VM's files are made instead: linked in,
# nettle's and liblzma's start-up code probed the CPU (a VM exit a probe) at each exec of
# warren, 65-110 us of every `warren run` (src/image/libs.h).
# SQLite's SQL math functions name libm's, and a static libm does not link beside a dynamic
# libc: src/util/lazymath.c looks them up in libm.so.6 if they are ever called, so no libm is
# mapped at each exec (warren itself uses nothing of it).
override LDLIBS += -Wl,-Bstatic $(shell pkg-config --libs $(PKGS) 2>/dev/null) -Wl,-Bdynamic
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer

# BUILD is where objects and binaries go: build (optimised) or build/san (sanitizers)
BUILD   ?= build
SRCS    := $(shell find src -name '*.c' -not -path 'src/guest/*' | sort)
HDRS    := $(shell find src -name '*.h')
OBJS    := $(SRCS:src/%.c=$(BUILD)/obj/%.o)
# the console's files (src/serve/console/), compiled in as byte arrays by scripts/embed-assets
CONSOLE := $(sort $(wildcard src/serve/console/*))
OBJS    += $(BUILD)/obj/gen/console_assets.o
LIBOBJS := $(filter-out $(BUILD)/obj/main.o,$(OBJS))
UNIT    := $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(wildcard tests/unit/test_*.c))
PREBUILT := $(BUILD)/obj/gen/seccomp_prebuilt.o
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_FLAGS := -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer

# make install: where (PREFIX=/usr and ZSHCOMPDIR=/usr/share/zsh/vendor-completions for Debian)
PREFIX  ?= /usr/local
BINDIR  ?= $(PREFIX)/bin
MANDIR  ?= $(PREFIX)/share/man
DOCDIR  ?= $(PREFIX)/share/doc/warren
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
MANS    := $(patsubst docs/man/%.scd,$(BUILD)/man/%,$(wildcard docs/man/*.scd))
DOCS    := README.md $(sort $(wildcard docs/*.md)) docs/openapi.yaml

.PHONY: all man deps check check-v2 unit demo bench bench-vm soak clean fuzz fuzz-smoke layering install uninstall

all: $(BUILD)/warren $(BUILD)/warren-runc $(BUILD)/warren-guest-init man

man: $(MANS)

$(BUILD)/man/%: docs/man/%.scd
	@mkdir -p $(dir $@)
	scdoc < $< > $@

# The vm driver's guest init (pid 1 in the VM): static, with the C library, contract.h,
# util/sys.h and of warren's code only a job's executor, its relay and util/error.c; built
# without the sanitizers of BUILD=build/san.
GUEST_CFLAGS := -O2 -g -static -std=c17 -D_GNU_SOURCE -Wall -Wextra -Werror -Isrc
$(BUILD)/warren-guest-init: $(wildcard src/guest/*.c) src/cell/executor.c src/cell/execfiles.c src/cell/vm/vmexec.c src/util/error.c \
			    src/guest/guest.h src/cell/contract.h src/cell/executor.h src/cell/vmexec.h src/util/sys.h Makefile
	@mkdir -p $(dir $@)
	$(CC) $(GUEST_CFLAGS) -o $@ $(filter %.c,$^)

$(BUILD)/warren: $(OBJS) $(PREBUILT)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# warren called as warren-runc speaks runc's command line (the OCI runtime face, docs/oci.md)
$(BUILD)/warren-runc: $(BUILD)/warren
	ln -sf warren $@

# The default seccomp filters, compiled at build time (scripts/seccomp-gen.c) instead of at
# every run; what is linked without them compiles them itself.
$(BUILD)/seccomp-gen: scripts/seccomp-gen.c $(LIBOBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -Isrc -o $@ $< $(LIBOBJS) $(LDLIBS)

$(BUILD)/gen/seccomp_prebuilt.c: $(BUILD)/seccomp-gen
	@mkdir -p $(dir $@)
	ASAN_OPTIONS=detect_leaks=0 $< >$@.tmp && mv $@.tmp $@

$(PREBUILT): $(BUILD)/gen/seccomp_prebuilt.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/%.o: src/%.c $(HDRS) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/obj/cli/version.o $(BUILD)/obj/oci/info.o: override CFLAGS += -DWARREN_VERSION='"$(VERSION)"'
$(BUILD)/obj/cli/version.o $(BUILD)/obj/oci/info.o: debian/changelog

$(BUILD)/gen/console_assets.c: $(CONSOLE) scripts/embed-assets
	@mkdir -p $(dir $@)
	scripts/embed-assets $(CONSOLE) > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/gen/console_assets.o: $(BUILD)/gen/console_assets.c src/serve/console.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/unit/%: tests/unit/%.c $(LIBOBJS) $(PREBUILT)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -o $@ $< $(LIBOBJS) $(PREBUILT) $(LDLIBS) -lcmocka

# A libFuzzer target links the project's objects built by clang (BUILD=build/fuzz); the resolver's
# includes dns.c itself to reach its static handlers.
$(BUILD)/fuzz_dns: LIBOBJS := $(filter-out $(BUILD)/obj/net/dns.o,$(LIBOBJS))
$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(LIBOBJS)
	$(CC) $(CFLAGS) -fsanitize=fuzzer -o $@ $< $(LIBOBJS) $(LDLIBS)

# Install the Debian packages the build, the tests and the demo need (as root, once).
deps:
	@scripts/install-deps

# Includes point down the layers of DESIGN.md only (scripts/check-layers names each arrow up).
layering:
	@scripts/check-layers

# Tests run against a build with AddressSanitizer and UndefinedBehaviorSanitizer.
check: deps layering
	$(MAKE) BUILD=build/san CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" build/san/warren build/san/warren-runc build/san/warren-guest-init \
		$(patsubst tests/unit/%.c,build/san/unit/%,$(wildcard tests/unit/test_*.c))
	@$(MAKE) --no-print-directory fuzz-smoke
	@WARREN=$(CURDIR)/build/san/warren tests/run-all $(patsubst tests/unit/%.c,build/san/unit/%,$(wildcard tests/unit/test_*.c))

# The same build, its tests run on a cgroup v2 host: a guest of this machine's kernel (docs/vm.md).
check-v2: deps
	$(MAKE) BUILD=build/san CFLAGS="-O1 -g $(SAN)" LDFLAGS="$(SAN)" build/san/warren
	@tests/v2/check

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
	@bench/work

# The vm driver: boot-to-exit beside bare qemu, qemu's memory (bench/vm).
bench-vm: deps all
	@bench/vm

# Many runs (every limit, kills, --net nat, rootless), then kill -9 of warren at random
# moments and gc: nothing may be left. SOAK_RUNS, SOAK_KILLS, SOAK_PAR: see bench/soak.
soak: deps all
	@bench/soak

install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(DOCDIR)/examples/demo
	install -m 755 $(BUILD)/warren $(DESTDIR)$(BINDIR)/warren
	ln -sf warren $(DESTDIR)$(BINDIR)/warren-runc
	install -m 755 $(BUILD)/warren-guest-init $(DESTDIR)$(BINDIR)/warren-guest-init
	install -m 644 $(filter %.1,$(MANS)) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(filter %.5,$(MANS)) $(DESTDIR)$(MANDIR)/man5
	install -m 644 completion/warren.bash $(DESTDIR)$(BASHCOMPDIR)/warren
	install -m 644 completion/_warren $(DESTDIR)$(ZSHCOMPDIR)/_warren
	install -m 644 $(DOCS) $(DESTDIR)$(DOCDIR)
	install -m 644 examples/demo.yaml $(DESTDIR)$(DOCDIR)/examples
	install -m 644 examples/demo/README $(DESTDIR)$(DOCDIR)/examples/demo

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/warren $(DESTDIR)$(BINDIR)/warren-runc $(DESTDIR)$(BINDIR)/warren-guest-init $(DESTDIR)$(BASHCOMPDIR)/warren $(DESTDIR)$(ZSHCOMPDIR)/_warren
	rm -f $(patsubst $(BUILD)/man/%,$(DESTDIR)$(MANDIR)/man1/%,$(filter %.1,$(MANS))) \
		$(patsubst $(BUILD)/man/%,$(DESTDIR)$(MANDIR)/man5/%,$(filter %.5,$(MANS)))
	rm -rf $(DESTDIR)$(DOCDIR)

clean:
	rm -rf build/obj build/gen build/unit build/warren build/warren-runc build/warren-guest-init build/san build/fuzz build/man build/vm build/v2
