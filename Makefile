# avi: asynchronous variational integrators for elastic bodies with contact.
#
#   make            check the dependencies (deps), then build $(B)/libavi.a,
#                   $(B)/avi and $(B)/tests/check_penetration
#   make deps       check the build dependencies; as root with apt-get,
#                   install the missing ones (make, make run, make test,
#                   make test-long, make bench and make valgrind run it first)
#   make run        build and run the default sphere-plate scene
#   make test       build and run the whole suite (test-unit, test-physics,
#                   test-san, test-tsan, test-cli, test-compilers; TEST_JOBS at a time),
#                   ending with the elapsed time and one total line
#   make test-long  long physics runs (minutes), then avi under helgrind and
#                   the heavier parallel unit programs under ThreadSanitizer
#   make bench      benchmarks; figures in bench/README.md
#   make valgrind   unit tests under valgrind
#   make install    bin/avi, lib/libavi.so (soname libavi.so.MAJOR), libavi.a,
#                   include/avi, lib/pkgconfig/avi.pc, share/man/man1/avi.1,
#                   share/avi (tools, scenes), the Python module in
#                   lib/python3/dist-packages/avi; under $(DESTDIR)$(PREFIX)
#   make uninstall  removes what make install put there
#   make shared     $(B)/libavi.so (the Python module in python/ loads it)
#   make test-compilers  (part of make test) unit tests built by clang in
#                   $(B)-clang, and avi from gcc, clang and gcc without
#                   AVX2/FMA ($(B)-noarch) writing bitwise-identical files
#
# Variables (make VAR=value):
#   B        build directory, any path (default build); the sanitizer,
#            clang, no-AVX2, fuzz and -fPIC (shared library) trees are
#            $(B)-san, $(B)-clang, $(B)-noarch, $(B)-fuzz and $(B)-pic;
#            ThreadSanitizer's $(B)-tsan
#   PREFIX   where make install puts things (default /usr/local);
#   DESTDIR  a staging root put before PREFIX (avi.pc still says PREFIX)
#   CC       compiler (default gcc; an environment CC is used as given)
#   OPT      optimisation (default -O3)
#   ARCH     architecture flags (default -mavx2 -mfma where the CPU has both)
#   CFLAGS   your flags (default -g), added after OPT and ARCH: CFLAGS=-g
#            keeps -O3 and ARCH; set OPT or ARCH to change those (a -O in
#            CFLAGS comes later and wins)
#   TEST_JOBS  jobs make test runs at once (default: the CPUs)
#   CPPFLAGS, LDFLAGS, LDLIBS  added to the preprocessor, link and library
#            flags
#   CHOLMOD_CFLAGS, CHOLMOD_LIBS  where CHOLMOD is: from pkg-config when a
#            cholmod .pc is installed, else Debian's /usr/include/suitesparse
#   UMFPACK_LIBS  SuiteSparse's sparse LU (default -lumfpack; its header is
#            found with CHOLMOD_CFLAGS)
# The flags every build needs (C11, warnings, -ffp-contract=off, defines,
# include paths) are kept apart, after yours, so that no CFLAGS drops them.

# make predefines CC (cc): only a CC from the command line or the
# environment overrides the default here.
ifeq ($(origin CC),default)
CC       := gcc
endif
OPT      ?= -O3
# AVX2 and FMA where the CPU has them (bench/README.md: about 25 % fewer
# instructions per event); valgrind runs such code, unlike AVX-512. Only a
# command-line ARCH overrides it: shells often export ARCH=x86_64.
ifneq ($(origin ARCH),command line)
ARCH     := $(shell grep -qw avx2 /proc/cpuinfo 2>/dev/null && grep -qw fma /proc/cpuinfo 2>/dev/null && echo -mavx2 -mfma)
endif
CFLAGS   ?= -g
override B := $(patsubst %/,%,$(or $(B),build))
# -ffp-contract=off: no fused multiply-add unless written, so that every
# compiler and every ARCH rounds alike (clang contracts a*b+c by default).
WARN     := -std=c11 -ffp-contract=off -Wall -Wextra -Wshadow -Wno-unused-parameter -Werror=implicit-function-declaration
DEFS     := -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
# $(B)/gen holds the generated built-in scene list (builtin_scenes.inc).
INCLUDES := -Iinclude -Isrc -I$(B)/gen
PKGS     := hdf5 yaml-0.1 jemalloc libcrypto
CHOLMOD_PC := $(firstword $(foreach p,cholmod CHOLMOD,$(shell pkg-config --exists $(p) 2>/dev/null && echo $(p))))
ifneq ($(CHOLMOD_PC),)
CHOLMOD_CFLAGS ?= $(shell pkg-config --cflags $(CHOLMOD_PC))
CHOLMOD_LIBS   ?= $(shell pkg-config --libs $(CHOLMOD_PC))
else
CHOLMOD_CFLAGS ?= -I/usr/include/suitesparse
CHOLMOD_LIBS   ?= -lcholmod -lsuitesparseconfig
endif
# UMFPACK (SuiteSparse's sparse LU, the sync-rootfind `lu` solver): no .pc in Debian.
UMFPACK_LIBS   ?= -lumfpack
DEP_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(CHOLMOD_CFLAGS)
DEP_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lhdf5_hl $(UMFPACK_LIBS) $(CHOLMOD_LIBS)
# What libavi itself needs (jemalloc is the binary's allocator, not the library's).
LIBAVI_LIBS = $(shell pkg-config --libs hdf5 yaml-0.1 libcrypto 2>/dev/null) -lhdf5_hl $(UMFPACK_LIBS) $(CHOLMOD_LIBS) -lm -pthread $(LDLIBS)
SAN_LIBS   = $(LIBAVI_LIBS)
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null)
# The fixed flags of every tree; each tree puts its own optimisation and
# sanitizer flags before them.
FIXED_CFLAGS = $(CPPFLAGS) $(WARN) $(DEFS) $(INCLUDES) $(DEP_CFLAGS)
ALL_CFLAGS = $(OPT) $(ARCH) $(CFLAGS) $(FIXED_CFLAGS)
LINK_FLAGS = $(OPT) $(ARCH) $(CFLAGS) $(LDFLAGS)
AVI_LIBS  = $(DEP_LIBS) -lm -pthread $(LDLIBS)
# A link's objects before its archives: extra objects of a test (below)
# may need the library.
LINK_INPUTS = $(filter-out %.a,$^) $(filter %.a,$^)

LIB_SRC  := $(sort $(wildcard src/base/*.c src/core/*.c src/potentials/*.c src/contact/*.c src/mesh/*.c src/output/*.c src/sync/*.c src/scene/*.c src/run/*.c))
CLI_SRC  := $(filter-out src/cli/mpi_main.c,$(sort $(wildcard src/cli/*.c)))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
PHYS_SRC := $(sort $(wildcard tests/physics/test_*.c))
# bench/queue.c measures the engine's queue against a 4-ary heap and a
# calendar queue that only it (and their unit tests) link: not in libavi.
BENCH_QUEUES := bench/calendar_queue.c bench/event_queue.c
BENCH_SRC:= $(filter-out $(BENCH_QUEUES),$(sort $(wildcard bench/*.c)))

LIB      := $(B)/libavi.a
AVI      := $(B)/avi
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(B)/tests/%)
PHYS_BIN := $(PHYS_SRC:tests/physics/%.c=$(B)/tests/%)
BENCH_BIN:= $(BENCH_SRC:bench/%.c=$(B)/bench/%)

# Sanitizer build of the library and unit tests lives in its own tree.
SAN      := $(B)-san
SAN_FLAGS:= -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
SAN_LIB  := $(SAN)/libavi.a
SAN_UNIT := $(UNIT_SRC:tests/unit/%.c=$(SAN)/tests/%)

# ThreadSanitizer tree (issue 30): the library, avi and the unit programs
# that run threads, named here (those without a source yet are left out):
# TSAN_TESTS under make test, TSAN_LONG_TESTS under make test-long. TSan
# runs a program 15 to 30 times slower: the three below take 90 to 200 s of
# CPU each under it even with AVI_TEST_QUICK=1 (tests/README.md), too much
# for make test's budget; a test that gets that light joins TSAN_TESTS.
TSAN      := $(B)-tsan
TSAN_FLAGS:= -O1 -g -fsanitize=thread -fno-omit-frame-pointer
TSAN_TESTS:= test_pool test_group_tick test_ranks
TSAN_LONG_TESTS := test_event_rounds test_model_pass test_contact_parallel
tsan_unit = $(addprefix $(TSAN)/tests/,$(filter $(1),$(UNIT_SRC:tests/unit/%.c=%)))
TSAN_UNIT := $(call tsan_unit,$(TSAN_TESTS))
TSAN_LONG_UNIT := $(call tsan_unit,$(TSAN_LONG_TESTS))

.PHONY: all programs deps paraview-deps run test test-unit test-physics test-san test-tsan test-cli test-compilers test-long bench valgrind \
        test-helgrind test-tsan-long clean fuzz install install-files uninstall shared
# The entry points check the dependencies first and then build in a
# sub-make, so that no compiler runs (even under -j) before the check is
# done, and a single target (make $(B)/tests/test_model) never runs it.
all: deps
	@$(MAKE) --no-print-directory programs
programs: $(LIB) $(AVI) $(B)/tests/check_penetration

# Dependencies come from Debian packages. As root on a machine that lacks them
# we install them; otherwise we stop with the apt-get line to run.
APT_PKGS := gcc g++ make pkg-config check libsubunit-dev libjemalloc-dev libhdf5-dev hdf5-tools \
            libyaml-dev libssl-dev libsuitesparse-dev python3 python3-h5py python3-numpy python3-matplotlib \
            python3-xarray python3-h5netcdf python3-netcdf4 netcdf-bin libmetis-dev
deps:
	@missing=""; \
	command -v $(CC) >/dev/null || missing="$$missing $(CC)"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
	for p in $(PKGS) check; do pkg-config --exists $$p 2>/dev/null || missing="$$missing $$p"; done; \
	/usr/bin/python3 -c 'import h5py, numpy, matplotlib' 2>/dev/null || missing="$$missing python3-h5py"; \
	/usr/bin/python3 -c 'import xarray, h5netcdf, netCDF4' 2>/dev/null || missing="$$missing python3-xarray"; \
	command -v ncdump >/dev/null || missing="$$missing netcdf-bin"; \
	echo '#include <cholmod.h>' | $(CC) $(CHOLMOD_CFLAGS) -E -x c - >/dev/null 2>&1 || missing="$$missing libsuitesparse-dev"; \
	echo '#include <umfpack.h>' | $(CC) $(CHOLMOD_CFLAGS) -E -x c - >/dev/null 2>&1 || missing="$$missing libsuitesparse-dev"; \
	echo '#include <metis.h>' | $(CC) -E -x c - >/dev/null 2>&1 || missing="$$missing libmetis-dev"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing missing dependencies:$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(APT_PKGS) >/dev/null \
	      || { echo "error: apt-get install failed" >&2; exit 1; }; \
	  else \
	    echo "error: missing build dependencies:$$missing" >&2; \
	    echo "       install them with: sudo apt-get install $(APT_PKGS)" >&2; exit 1; \
	  fi; \
	fi

# /parameters/build: provenance.c alone gets the commit (git describe, or
# "unknown" outside git) and its tree's flags; $(B)/gen/build_commit
# changes with the commit, so the object is rebuilt then.
GIT_DESCRIBE := $(or $(shell git describe --always --dirty 2>/dev/null),unknown)
build_info = -DAVI_BUILD_COMMIT='"$(GIT_DESCRIBE)"' -DAVI_BUILD_FLAGS='"$(strip $(subst ',,$(subst ",,$(1))))"'
$(B)/src/run/provenance.o: FIXED_CFLAGS += $(call build_info,$(OPT) $(ARCH) $(CFLAGS))
$(SAN)/src/run/provenance.o: FIXED_CFLAGS += $(call build_info,$(SAN_FLAGS))
$(TSAN)/src/run/provenance.o: FIXED_CFLAGS += $(call build_info,$(TSAN_FLAGS))
$(B)-clang/src/run/provenance.o: FIXED_CFLAGS += $(call build_info,$(OPT) $(ARCH))
$(B)-noarch/src/run/provenance.o: FIXED_CFLAGS += $(call build_info,$(OPT))
$(B)-pic/src/run/provenance.o: FIXED_CFLAGS += $(call build_info,$(OPT) $(ARCH) $(CFLAGS))
$(foreach t,$(B) $(B)-san $(B)-tsan $(B)-clang $(B)-noarch $(B)-pic,$(t)/src/run/provenance.o): $(B)/gen/build_commit
# (Not forced under make test's stages: built just before, and a job then
# would hold back whatever waits on it.)
$(B)/gen/build_commit: $(if $(TEST_ALL_TREES),,FORCE)
	@mkdir -p $(dir $@); echo '$(GIT_DESCRIBE)' | cmp -s - $@ || echo '$(GIT_DESCRIBE)' > $@
.PHONY: FORCE

$(B)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_SRC:%.c=$(B)/%.o)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(AVI): $(CLI_SRC:%.c=$(B)/%.o) $(LIB)
	$(CC) $(LINK_FLAGS) -o $@ $(LINK_INPUTS) $(AVI_LIBS)

# avi-mpi (issue 31): the avi command on MPI ranks, src/cli/mpi_main.c with
# main.c as avi_cli_main, built by Open MPI's mpicc. Open MPI comes from
# Debian (libopenmpi-dev openmpi-bin), installed as root with apt-get when
# missing, like clang; without it (not root, no network) avi-mpi and its
# test are skipped with a note.
MPICC   ?= mpicc
AVI_MPI := $(B)/avi-mpi
MPI_APT := libopenmpi-dev openmpi-bin
mpi-deps:
	@if ! command -v $(MPICC) >/dev/null || ! command -v mpirun >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing Open MPI"; \
	    { DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(MPI_APT) >/dev/null; } \
	      || echo "note: apt-get install $(MPI_APT) failed: avi-mpi is not built"; \
	  else echo "note: avi-mpi needs Open MPI: sudo apt-get install $(MPI_APT)"; fi; \
	fi
$(B)/mpi/main.o: src/cli/main.c
	@mkdir -p $(dir $@)
	$(MPICC) $(ALL_CFLAGS) -Dmain=avi_cli_main -MMD -MP -c $< -o $@
$(B)/src/cli/mpi_main.o: src/cli/mpi_main.c
	@mkdir -p $(dir $@)
	$(MPICC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@
$(AVI_MPI): $(B)/mpi/main.o $(B)/src/cli/mpi_main.o $(B)/src/cli/allocator.o $(LIB)
	$(MPICC) $(LINK_FLAGS) -o $@ $(LINK_INPUTS) $(AVI_LIBS)
.PHONY: mpi mpi-deps
# The library first, here: the sub-make must not build it beside this make's jobs.
mpi: deps mpi-deps $(LIB) $(B)/src/cli/allocator.o
	@if command -v $(MPICC) >/dev/null; then $(MAKE) --no-print-directory $(AVI_MPI); fi

$(B)/tests/%: $(B)/tests/unit/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LINK_FLAGS) -o $@ $(LINK_INPUTS) $(CHECK_LIBS) $(AVI_LIBS)

$(B)/tests/%: $(B)/tests/physics/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LINK_FLAGS) -o $@ $(LINK_INPUTS) $(CHECK_LIBS) $(AVI_LIBS)

# Unit tests of code kept out of the library link it themselves: the
# benchmark queues, and the contact Hessians that check the gradients.
define test_extras
$(1)/tests/test_calendar_queue: $(BENCH_QUEUES:%.c=$(1)/%.o)
$(1)/tests/test_event_queue: $(1)/bench/event_queue.o
$(1)/tests/test_distance_edge_edge $(1)/tests/test_distance_point_triangle: $(1)/tests/unit/distance_hessian.o
endef

# Independent interpenetration checker for tests: HDF5 only, never libavi.
$(B)/tests/check_penetration: tests/tools/check_penetration.c
	@mkdir -p $(dir $@)
	$(CC) $(OPT) $(ARCH) $(CFLAGS) $(CPPFLAGS) $(WARN) $(DEFS) $(shell pkg-config --cflags hdf5) $(LDFLAGS) -o $@ $< $(shell pkg-config --libs hdf5) -lm

$(B)/bench/%: $(B)/bench/%.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LINK_FLAGS) -o $@ $(LINK_INPUTS) $(AVI_LIBS)
$(B)/bench/queue: $(BENCH_QUEUES:%.c=$(B)/%.o)
# bench/mpimodel partitions with METIS (libmetis-dev); nothing else links it.
$(B)/bench/mpimodel: $(B)/bench/mpimodel.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LINK_FLAGS) -o $@ $(LINK_INPUTS) $(AVI_LIBS) -lmetis

$(SAN)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $(FIXED_CFLAGS) -MMD -MP -c $< -o $@

$(SAN_LIB): $(LIB_SRC:%.c=$(SAN)/%.o)
	rm -f $@ && ar rcs $@ $^

$(SAN)/tests/%: $(SAN)/tests/unit/%.o $(SAN_LIB)
	$(CC) $(SAN_FLAGS) $(LDFLAGS) -o $@ $(LINK_INPUTS) $(CHECK_LIBS) $(SAN_LIBS)

$(SAN)/avi: $(CLI_SRC:%.c=$(SAN)/%.o) $(SAN_LIB)
	$(CC) $(SAN_FLAGS) $(LDFLAGS) -o $@ $(LINK_INPUTS) $(SAN_LIBS)

# The ThreadSanitizer tree, as the sanitizer tree (no jemalloc: TSan
# brings its own allocator).
$(TSAN)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(TSAN_FLAGS) $(FIXED_CFLAGS) -MMD -MP -c $< -o $@

$(TSAN)/libavi.a: $(LIB_SRC:%.c=$(TSAN)/%.o)
	rm -f $@ && ar rcs $@ $^

$(TSAN)/tests/%: $(TSAN)/tests/unit/%.o $(TSAN)/libavi.a
	$(CC) $(TSAN_FLAGS) $(LDFLAGS) -o $@ $(LINK_INPUTS) $(CHECK_LIBS) $(SAN_LIBS)

$(TSAN)/avi: $(CLI_SRC:%.c=$(TSAN)/%.o) $(TSAN)/libavi.a
	$(CC) $(TSAN_FLAGS) $(LDFLAGS) -o $@ $(LINK_INPUTS) $(SAN_LIBS)

# Compiler independence: the library, avi and unit tests built by clang
# (same OPT and ARCH) in $(B)-clang, and avi built by $(CC) without ARCH in
# $(B)-noarch. $(call tree,DIR,COMPILER,FLAGS,TOOL) gives DIR's rules.
CLANG_CC ?= clang
CLANG    := $(B)-clang
NOARCH   := $(B)-noarch
CLANG_UNIT := $(UNIT_SRC:tests/unit/%.c=$(CLANG)/tests/%)
define tree
$(1)/%.o: %.c | $(4)
	@mkdir -p $$(dir $$@)
	$(2) $(3) $$(FIXED_CFLAGS) -MMD -MP -c $$< -o $$@
$(1)/libavi.a: $$(LIB_SRC:%.c=$(1)/%.o)
	rm -f $$@ && ar rcs $$@ $$^
$(1)/avi: $$(CLI_SRC:%.c=$(1)/%.o) $(1)/libavi.a
	$(2) $(3) $$(LDFLAGS) -o $$@ $$(LINK_INPUTS) $$(AVI_LIBS)
$(1)/tests/%: $(1)/tests/unit/%.o $(1)/libavi.a
	$(2) $(3) $$(LDFLAGS) -o $$@ $$(LINK_INPUTS) $$(CHECK_LIBS) $$(AVI_LIBS)
endef
$(eval $(call tree,$(CLANG),$(CLANG_CC),$(OPT) $(ARCH),$(CLANG)/toolchain.txt))
$(eval $(call tree,$(NOARCH),$(CC),$(OPT)))
# Test objects are intermediates of the test programs: kept, so that make
# neither rebuilds nor removes them (nor ends make test with an rm line).
.SECONDARY: $(UNIT_SRC:%.c=$(CLANG)/%.o) $(UNIT_SRC:%.c=$(B)/%.o) $(PHYS_SRC:%.c=$(B)/%.o) $(UNIT_SRC:%.c=$(SAN)/%.o) \
            $(BENCH_SRC:%.c=$(B)/%.o)
.SECONDARY: $(UNIT_SRC:%.c=$(TSAN)/%.o)
$(foreach t,$(B) $(SAN) $(TSAN) $(CLANG),$(eval $(call test_extras,$(t))))

# clang, installed as root with apt-get when missing (as for make fuzz).
$(CLANG)/toolchain.txt:
	@mkdir -p $(CLANG)
	@if ! command -v $(CLANG_CC) >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing clang"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang >/dev/null \
	      || { echo "error: apt-get install failed" >&2; exit 1; }; \
	  else \
	    echo "error: $(CLANG_CC) not found; install it with: sudo apt-get install clang" >&2; exit 1; \
	  fi; \
	fi; $(CLANG_CC) --version | head -n 1 > $@

# Unit tests under clang, then short runs of built-in scenes by every avi.
# test_check_penetration runs in $(B) alone: it checks the one checker
# program, $(B)/tests/check_penetration, through HDF5, not libavi.
ONE_TREE_TESTS := test_check_penetration
CLANG_RUN := $(filter-out $(ONE_TREE_TESTS:%=$(CLANG)/tests/%),$(CLANG_UNIT))
# Two jobs, so that make test runs them side by side.
.PHONY: test-compilers-unit test-compilers-compare
test-compilers: test-compilers-unit test-compilers-compare
test-compilers-unit: $(CLANG_UNIT) | programs
	@AVI_TEST_QUICK=1 AVI_TEST_STAGE=test-compilers tests/run_suite.sh $(CLANG_RUN)
test-compilers-compare: programs $(CLANG)/avi $(NOARCH)/avi
	@s=$$(date +%s); if tests/compare_builds.sh $(AVI) $(CLANG)/avi $(NOARCH)/avi; then r="1 0 0"; else r="0 1 0"; fi; \
	t=$$(( $$(date +%s) - s )); echo "  [compare_builds] $${t}s"; \
	[ -z "$${AVI_TEST_TALLY:-}" ] || echo "$$r $$t test-compilers" >> "$$AVI_TEST_TALLY"; [ "$$r" = "1 0 0" ]

# Built-in scenes: data/scenes/*.yaml as C string literals ("?" escaped
# against trigraphs), included by src/scene/builtin_scenes.c. The directory is a
# prerequisite so that adding or removing a scene regenerates the list.
SCENE_YAML := $(sort $(wildcard data/scenes/*.yaml))
$(B)/gen/builtin_scenes.inc: $(SCENE_YAML) data/scenes
	@mkdir -p $(dir $@)
	awk 'FNR == 1 { if (NR > 1) print "},"; n = FILENAME; sub(/^.*\//, "", n); sub(/\.yaml$$/, "", n); printf "{\"%s\",\n", n } \
	{ s = ""; for (i = 1; i <= length($$0); i++) { c = substr($$0, i, 1); if (c == "\\" || c == "\"" || c == "?") c = "\\" c; s = s c } \
	  printf "\"%s\\n\"\n", s } \
	END { if (NR > 0) print "}," }' $(SCENE_YAML) > $@.tmp && mv $@.tmp $@
$(B)/src/scene/builtin_scenes.o $(SAN)/src/scene/builtin_scenes.o $(CLANG)/src/scene/builtin_scenes.o \
  $(NOARCH)/src/scene/builtin_scenes.o $(PIC)/src/scene/builtin_scenes.o: $(B)/gen/builtin_scenes.inc
$(TSAN)/src/scene/builtin_scenes.o: $(B)/gen/builtin_scenes.inc

# The default scene, its XDMF sidecar and its energy figure.
RUN_OUT ?= sphere_plate.h5
run: deps
	@$(MAKE) --no-print-directory programs
	$(AVI) run $(RUN_ARGS) -o $(RUN_OUT)
	/usr/bin/python3 tools/plot_energy.py $(RUN_OUT) -o $(RUN_OUT:.h5=_energy.png)

# Each stage's runner (run_suite.sh, run_cli.sh) appends "passed failed
# skipped seconds stage" to $(TALLY). make test runs the stages side by
# side, TEST_JOBS jobs at a time (default: the CPUs; a make -jN jobserver
# wins), each job's output printed whole when it ends (--output-sync), and
# every stage (-k: a failing stage does not hide the others); then the
# stages' times, the elapsed time and one total line. It fails if any stage
# failed, or stopped before its tests (a build error). Under make test the
# command-line stage starts once every tree is built: its scripts run make
# (test_install.sh), which must not read a tree being written.
TALLY = $(B)/test-tally
TEST_STAGES := test-physics test-unit test-san test-tsan test-cli test-compilers
# make -j starts the goals' jobs in this order: the longest physics program
# first, then the stages that wait on other trees' builds; the other physics
# and unit programs fill the jobs in between.
TEST_GOALS = $(filter run-physics/test_friction,$(PHYS_RUN)) test-san test-tsan test-cli test-compilers test-physics test-unit
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
TEST_J = $(if $(findstring jobserver,$(MAKEFLAGS)),,-j$(TEST_JOBS))
# The gcc tree first (every stage needs it; make would otherwise put off
# whatever waits on its generated files until the other trees are built).
test: deps
	@mkdir -p $(B); rm -f $(TALLY); rm -rf $(B)/cli-queue; start=$$(date +%s); \
	$(MAKE) -k $(TEST_J) --no-print-directory programs $(UNIT_BIN) $(PHYS_BIN); rc1=$$?; \
	AVI_TEST_TALLY="$(abspath $(TALLY))" $(MAKE) -k $(TEST_J) \
	  --output-sync=target --no-print-directory TEST_ALL_TREES=1 $(TEST_GOALS); rc=$$?; [ $$rc1 -eq 0 ] || rc=$$rc1; \
	touch $(TALLY); awk -v rc=$$rc -v t=$$(( $$(date +%s) - start )) -v stages=$(words $(TEST_STAGES)) \
	  '{ p += $$1; f += $$2; k += $$3; n++; if (NF >= 5) { s[$$5] += $$4; if (!($$5 in o)) o[$$5] = ++m } } \
	   END { if (rc && !f) { print "a stage stopped before its tests ended (see above): counted as 1 failed"; f = 1 } \
	         line = "make test: stage times (tests, not builds):"; \
	         for (i = 1; i <= m; i++) for (x in o) if (o[x] == i) line = line sprintf("%s %s %d s", i > 1 ? "," : "", x, s[x]); \
	         print line; \
	         printf "make test: %d runs in %d stages, %d min %d s\n", n, stages, t / 60, t % 60; \
	         printf "%d passed, %d failed, %d skipped\n", p, f, k; exit (f > 0) }' $(TALLY)
# Every tree make test builds: the command-line stage waits for them.
ALL_TREES := programs $(UNIT_BIN) $(PHYS_BIN) $(SAN_UNIT) $(SAN)/avi $(TSAN_UNIT) $(TSAN)/avi $(CLANG_UNIT) $(CLANG)/avi $(NOARCH)/avi shared

# Some unit tests compare with build/avi and run check_penetration: built
# first (order only), so that they never find them missing and skip.
test-unit: $(UNIT_BIN) | programs
	@AVI_TEST_STAGE=$@ tests/run_suite.sh $(UNIT_BIN)

# The physics programs, a stage of their own, each program a job of its
# own (the longest first), so that make test spreads them over its jobs.
PHYS_FIRST := test_friction test_hertz test_sphere_plate test_contact_energy
PHYS_RUN := $(addprefix run-physics/,$(foreach t,$(PHYS_FIRST),$(filter $(t),$(PHYS_BIN:$(B)/tests/%=%))) \
                                     $(filter-out $(PHYS_FIRST),$(PHYS_BIN:$(B)/tests/%=%)))
.PHONY: $(PHYS_RUN)
test-physics: $(PHYS_RUN)
$(PHYS_RUN): run-physics/%: $(B)/tests/% | programs
	@AVI_TEST_STAGE=test-physics tests/run_suite.sh $<

# jemalloc's allocator is not loaded in the sanitizer build: ASan brings its own.
# test_contact_short.sh: short contact runs (AVI with and without friction,
# dcr), so that the contact paths run under ASan and UBSan too.
SAN_RUN := $(filter-out $(ONE_TREE_TESTS:%=$(SAN)/tests/%),$(SAN_UNIT))
.PHONY: test-san-unit test-san-cli
test-san: test-san-unit test-san-cli
test-san-unit: $(SAN_UNIT) | programs
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 AVI_TEST_QUICK=1 AVI_TEST_STAGE=test-san tests/run_suite.sh $(SAN_RUN)
test-san-cli: $(SAN)/avi | programs
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 AVI_BIN=$(SAN)/avi AVI_TEST_STAGE=test-san \
	  tests/run_cli.sh tests/cli/test_bad_input.sh tests/cli/test_run_output.sh tests/cli/test_resume_integrity.sh \
	  tests/cli/test_file_safety.sh tests/cli/test_contact_short.sh

# ThreadSanitizer (issue 30): the parallel unit programs of TSAN_TESTS, then
# test_threads.sh's quick cases (at 4 threads: two-spheres with friction,
# the serial bits, a chaos seed, a resume with 2; two-spheres under dcr) by
# the TSan avi: the AVI rounds, the contact manager, the observables, the
# synchronous force loops and DCR's broad phase on the pool. A report ends
# the program with exit 66: a failure. tests/tsan.supp: libgomp's own.
TSAN_ENV := TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp"
.PHONY: test-tsan-unit test-tsan-cli
test-tsan: test-tsan-unit test-tsan-cli
test-tsan-unit: $(TSAN_UNIT) | programs
	@$(if $(TSAN_UNIT),$(TSAN_ENV) AVI_TEST_QUICK=1 AVI_TEST_STAGE=test-tsan tests/run_suite.sh $(TSAN_UNIT),echo "test-tsan: none of $(TSAN_TESTS) exists yet")
test-tsan-cli: $(TSAN)/avi | programs
	@$(TSAN_ENV) AVI_BIN=$(TSAN)/avi AVI_THREADS_QUICK=1 AVI_TEST_STAGE=test-tsan tests/run_cli.sh tests/cli/test_threads.sh
# The heavier parallel unit programs under TSan (make test-long).
test-tsan-long: deps
	@$(MAKE) --no-print-directory programs $(TSAN_LONG_UNIT)
	@$(if $(TSAN_LONG_UNIT),$(TSAN_ENV) AVI_TEST_QUICK=1 tests/run_suite.sh $(TSAN_LONG_UNIT),echo "test-tsan-long: none of $(TSAN_LONG_TESTS) exists yet")

# The ParaView test (tests/cli/test_paraview.sh) needs Debian's ParaView with
# its Python module, and Xvfb to render without a display: as root with
# apt-get they are installed like the build dependencies (about 70 MB to
# download, 0.6 GB installed with Qt and Open MPI); otherwise, or when that
# fails (no network), the test reports itself skipped.
PARAVIEW_PKGS := paraview python3-paraview xvfb xauth
paraview-deps:
	@if ! { command -v pvbatch && command -v xvfb-run && command -v xauth; } >/dev/null || \
	    ! dpkg -s python3-paraview >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing ParaView for the ParaView test: $(PARAVIEW_PKGS)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(PARAVIEW_PKGS) >/dev/null 2>&1 || \
	      { DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(PARAVIEW_PKGS) >/dev/null 2>&1; } || \
	      echo "note: could not install $(PARAVIEW_PKGS); the ParaView test will be skipped"; \
	  else \
	    echo "note: the ParaView test needs: sudo apt-get install $(PARAVIEW_PKGS)"; \
	  fi; \
	fi

# The scripts in two jobs side by side under make test, sharing one queue
# (run_cli.sh's AVI_CLI_QUEUE): each job takes the next script not yet
# taken, the slowest first (CLI_SLOW, seconds measured in make test), so
# that the two end together whatever a script costs on the day.
CLI_SLOW := threads contact_cli mpi signals build paraview resume install synchronized_every full_disk
CLI_SCRIPTS := $(wildcard $(foreach s,$(CLI_SLOW),tests/cli/test_$(s).sh)) \
               $(filter-out $(CLI_SLOW:%=tests/cli/test_%.sh),$(sort $(wildcard tests/cli/test_*.sh)))
CLI_QUEUE := $(B)/cli-queue/$(shell date +%s%N)
.PHONY: test-cli-1 test-cli-2
test-cli: test-cli-1 test-cli-2
test-cli-1 test-cli-2: test-cli-%: programs shared paraview-deps mpi | $(if $(TEST_ALL_TREES),$(ALL_TREES))
	@mkdir -p $(CLI_QUEUE) && AVI_CLI_QUEUE=$(CLI_QUEUE) AVI_BIN=$(AVI) AVI_MPI_BIN=$(AVI_MPI) AVI_TEST_STAGE=test-cli \
	  tests/run_cli.sh $(CLI_SCRIPTS)

test-long: deps
	@$(MAKE) --no-print-directory programs $(UNIT_BIN) $(PHYS_BIN)
	@AVI_TEST_LONG=1 tests/run_suite.sh $(UNIT_BIN) $(PHYS_BIN); rc=$$?; \
	$(MAKE) --no-print-directory test-helgrind || rc=1; \
	$(MAKE) --no-print-directory test-tsan-long || rc=1; exit $$rc

# helgrind (issue 30): avi at 4 threads on a small contact scene (the pool,
# group ticks, the contact manager, the output thread) and on the bar (time
# slices); any report fails. tests/helgrind.supp: system libraries' own reports.
HELGRIND_RUN := two-spheres --set time.end=6e-4 --set contact.friction=0.3 --threads 4
HELGRIND_RUN2 := bar --set time.end=0.2 --threads 4
test-helgrind: deps
	@$(MAKE) --no-print-directory programs
	@rc=0; for run in "$(HELGRIND_RUN)" "$(HELGRIND_RUN2)"; do \
	  s=$$(date +%s); d=$$(mktemp -d); if valgrind --tool=helgrind -q --error-exitcode=9 --suppressions=tests/helgrind.supp \
	    $(AVI) run $$run -o $$d/helgrind.h5 --quiet; then r=0; else r=1; rc=1; fi; rm -rf "$$d"; \
	  echo "helgrind: avi run $$run: $$([ $$r = 0 ] && echo no report || echo FAILED) ($$(( $$(date +%s) - s )) s)"; \
	done; exit $$rc

bench: deps
	@$(MAKE) --no-print-directory programs $(BENCH_BIN)
	@bench/run_all.sh

valgrind: deps
	@$(MAKE) --no-print-directory programs $(UNIT_BIN)
	@for t in $(UNIT_BIN); do \
	  AVI_TEST_QUICK=1 CK_FORK=no valgrind -q --error-exitcode=9 --leak-check=full --num-callers=40 \
	    --suppressions=tests/valgrind.supp $$t || exit 1; done

clean:
	rm -rf $(B) $(SAN) $(TSAN) $(CLANG) $(NOARCH) $(PIC)

# $(PIC) is defined further down: name its tree here, or its objects never
# see their headers change.
-include $(shell find $(B) $(SAN) $(TSAN) $(CLANG) $(NOARCH) $(B)-pic -name '*.d' 2>/dev/null)

# ---- Fuzzing (tests/fuzz): libFuzzer harnesses for the scene parser and the
# mesh readers, built with clang under ASan and UBSan in their own tree.
# Not part of `make test`.
#   make fuzz                    each harness for FUZZ_SECONDS (default 60)
#   make fuzz FUZZ_SECONDS=3600 FUZZ_NAMES=msh
# New inputs go to $(B)-fuzz/corpus/<name>, crashes to $(B)-fuzz/artifacts.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_NAMES   ?= scene msh obj
FUZZ_ARGS    ?= -max_len=65536 -rss_limit_mb=2048 -timeout=10
FUZZ_UBSAN   ?= print_stacktrace=1
FUZZ_B       := $(B)-fuzz
FUZZ_FLAGS   := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_OBJ     := $(LIB_SRC:%.c=$(FUZZ_B)/%.o)
FUZZ_LIB     := $(FUZZ_B)/libavi.a
FUZZ_TOOL    := $(FUZZ_B)/toolchain.txt
FUZZ_LIBS     = $(SAN_LIBS)
FUZZ_APT     := clang libclang-rt-dev
FUZZ_PROBE   := int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }

fuzz: deps
	@$(MAKE) --no-print-directory $(FUZZ_NAMES:%=$(FUZZ_B)/fuzz_%)
	@failed=""; for n in $(FUZZ_NAMES); do \
	  mkdir -p $(FUZZ_B)/corpus/$$n $(FUZZ_B)/artifacts; \
	  echo "fuzz_$$n: $(FUZZ_SECONDS) s, log in $(FUZZ_B)/fuzz_$$n.log"; \
	  if UBSAN_OPTIONS=$(FUZZ_UBSAN) ./$(FUZZ_B)/fuzz_$$n $(FUZZ_B)/corpus/$$n tests/fuzz/corpus_$$n \
	       -dict=tests/fuzz/$$n.dict -max_total_time=$(FUZZ_SECONDS) $(FUZZ_ARGS) \
	       -artifact_prefix=$(FUZZ_B)/artifacts/$$n- -print_final_stats=1 > $(FUZZ_B)/fuzz_$$n.log 2>&1; then \
	    grep -E '^#[0-9]+ +DONE|^Done|stat::number_of_executed_units|stat::peak_rss_mb' $(FUZZ_B)/fuzz_$$n.log | sed 's/^/  /'; \
	  else \
	    failed="$$failed $$n"; tail -n 60 $(FUZZ_B)/fuzz_$$n.log; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: FAILED:$$failed (inputs in $(FUZZ_B)/artifacts)" >&2; exit 1; fi; \
	echo "fuzz: no crash, leak, hang or sanitizer report"

# clang with the libFuzzer runtime; as root with apt-get, installed when missing.
$(FUZZ_TOOL):
	@mkdir -p $(FUZZ_B)
	@if ! echo '$(FUZZ_PROBE)' | $(FUZZ_CC) -fsanitize=fuzzer,address,undefined -x c - -o $(FUZZ_B)/probe 2>/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    echo "installing clang and the libFuzzer runtime"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $(FUZZ_APT) >/dev/null || \
	      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends clang >/dev/null; } \
	      || { echo "error: apt-get install failed" >&2; exit 1; }; \
	    echo '$(FUZZ_PROBE)' | $(FUZZ_CC) -fsanitize=fuzzer,address,undefined -x c - -o $(FUZZ_B)/probe || exit 1; \
	  else \
	    echo "error: $(FUZZ_CC) cannot build a libFuzzer target" >&2; \
	    echo "       install it with: sudo apt-get install $(FUZZ_APT)" >&2; exit 1; \
	  fi; \
	fi; rm -f $(FUZZ_B)/probe; $(FUZZ_CC) --version | head -n 1 > $@

$(FUZZ_B)/%.o: %.c | $(FUZZ_TOOL)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(FIXED_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_B)/src/scene/builtin_scenes.o: $(B)/gen/builtin_scenes.inc

$(FUZZ_LIB): $(FUZZ_OBJ)
	rm -f $@ && ar rcs $@ $^

$(FUZZ_B)/fuzz_%: $(FUZZ_B)/tests/fuzz/fuzz_%.o $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LIBS)

.SECONDARY: $(FUZZ_B)/tests/fuzz/fuzz_scene.o $(FUZZ_B)/tests/fuzz/fuzz_msh.o $(FUZZ_B)/tests/fuzz/fuzz_obj.o
-include $(wildcard $(FUZZ_OBJ:.o=.d) $(FUZZ_B)/tests/fuzz/*.d)

# ---- Shared library and installation.
# libavi.so is built from its own -fPIC tree, $(B)-pic, with the same flags:
# the static library and avi keep their non-PIC code (and their speed), and
# both builds write bitwise-identical files (tests/cli/test_install.sh).
VERSION  := $(shell sed -n 's/^[#]define AVI_VERSION_STRING "\(.*\)"/\1/p' include/avi/types.h)
SOMAJOR  := $(firstword $(subst ., ,$(VERSION)))
PIC      := $(B)-pic
SO       := $(B)/libavi.so.$(VERSION)

$(PIC)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -MMD -MP -c $< -o $@

# It exports the public API alone, the names src/libavi.map lists
# (tests/cli/test_exports.sh); --no-undefined-version fails the link on a
# listed name that no object defines.
$(SO): $(LIB_SRC:%.c=$(PIC)/%.o) src/libavi.map
	$(CC) $(LINK_FLAGS) -shared -Wl,-soname,libavi.so.$(SOMAJOR) -Wl,--no-undefined -Wl,--no-undefined-version \
	  -Wl,--version-script=src/libavi.map -o $@ $(filter %.o,$^) $(LIBAVI_LIBS)
	ln -sf libavi.so.$(VERSION) $(B)/libavi.so.$(SOMAJOR)
	ln -sf libavi.so.$(SOMAJOR) $(B)/libavi.so
# libavi.so in the build tree, where the Python module run from the source
# tree (PYTHONPATH=python) finds it (after SO is defined: a rule's
# prerequisites expand where the rule is read).
shared: $(SO)

PREFIX   ?= /usr/local
INST      = $(DESTDIR)$(PREFIX)
HEADERS  := $(sort $(wildcard include/avi/*.h))
TOOLS    := $(sort $(wildcard tools/*.py))
PYMOD    := $(sort $(wildcard python/avi/*.py))
# Every file install writes, relative to $(INST): uninstall removes these.
INSTALLED = bin/avi bin/avi-mpi lib/libavi.so.$(VERSION) lib/libavi.so.$(SOMAJOR) lib/libavi.so lib/libavi.a \
            lib/pkgconfig/avi.pc share/man/man1/avi.1 $(HEADERS) $(TOOLS:%=share/avi/%) \
            $(SCENE_YAML:data/scenes/%=share/avi/scenes/%) $(PYMOD:python/%=lib/python3/dist-packages/%)
# avi's own directories, removed by uninstall when empty (deepest first).
INST_DIRS = include/avi share/avi/tools share/avi/scenes share/avi lib/python3/dist-packages/avi
# pkg-config: a shared link needs only -lavi; a static one (--static) gets
# the private dependencies: packages with a .pc, the rest as flags.
PC_REQUIRES = hdf5 yaml-0.1 libcrypto $(CHOLMOD_PC)
PC_LIBS     = -lhdf5_hl $(UMFPACK_LIBS) $(if $(CHOLMOD_PC),,$(CHOLMOD_LIBS)) -lm -pthread

install: deps
	@$(MAKE) --no-print-directory install-files
install-files: programs $(SO)
	@[ -n "$(strip $(INST))" ] || { echo "error: PREFIX is empty" >&2; exit 2; }
	install -d $(INST)/bin $(INST)/lib/pkgconfig $(INST)/include/avi $(INST)/share/man/man1 \
	  $(INST)/share/avi/tools $(INST)/share/avi/scenes $(INST)/lib/python3/dist-packages/avi
	install -m 755 $(AVI) $(INST)/bin/avi
	if [ -x $(AVI_MPI) ]; then install -m 755 $(AVI_MPI) $(INST)/bin/avi-mpi; fi
	install -m 755 $(SO) $(INST)/lib/libavi.so.$(VERSION)
	ln -sf libavi.so.$(VERSION) $(INST)/lib/libavi.so.$(SOMAJOR)
	ln -sf libavi.so.$(SOMAJOR) $(INST)/lib/libavi.so
	install -m 644 $(LIB) $(INST)/lib/libavi.a
	install -m 644 $(HEADERS) $(INST)/include/avi
	install -m 644 docs/avi.1 $(INST)/share/man/man1/avi.1
	install -m 755 $(TOOLS) $(INST)/share/avi/tools
	install -m 644 $(SCENE_YAML) $(INST)/share/avi/scenes
	install -m 644 $(PYMOD) $(INST)/lib/python3/dist-packages/avi
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include' '' \
	  'Name: avi' 'Description: asynchronous variational integrators for elastic bodies with contact' \
	  'Version: $(VERSION)' 'Requires.private: $(strip $(PC_REQUIRES))' 'Cflags: -I$${includedir}' \
	  'Libs: -L$${libdir} -lavi' 'Libs.private: $(PC_LIBS)' > $(INST)/lib/pkgconfig/avi.pc

uninstall:
	@[ -n "$(strip $(INST))" ] || { echo "error: PREFIX is empty" >&2; exit 2; }
	cd $(INST) && rm -f $(INSTALLED) && rm -rf lib/python3/dist-packages/avi/__pycache__
	-cd $(INST) && rmdir $(INST_DIRS) 2>/dev/null; true
