# Two commands on a fresh clone: `make run` starts the devnet, `make test` runs the whole suite.
# A build that fails part-way leaves no dist/node/cli.js behind to look up to date.
.DELETE_ON_ERROR:
.PHONY: run build check test test-smoke test-stress test-deps install typecheck bench clean

# Every target runs on a supported Node.js (the LTS lines 24 and 26): the system's node when it is one,
# otherwise the pinned LTS in .node-version, installed once from the npm registry into .toolchain/ and
# checked against its recorded integrity (.ci/node.sh). `make test-smoke NODE_VERSION=24.21.0` picks one.
NODE_DIR := $(shell bash .ci/node.sh $(NODE_VERSION))
ifeq ($(NODE_DIR),)
$(error no supported Node.js (24 or newer) and none could be installed; see the message above)
endif
export PATH := $(NODE_DIR):$(PATH)
$(info Node.js $(shell $(NODE_DIR)/node --version) at $(NODE_DIR)/node)
# Node keeps the code it compiled and the TypeScript it stripped here, for every process a target starts.
export NODE_COMPILE_CACHE ?= $(CURDIR)/.toolchain/compile-cache

# Reproducible installs from the lockfile. msgpackr-extract is pinned (package.json `overrides`) to the
# release whose platform builds the registry serves for every platform, so the lockfile is complete.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.package-lock.json

# The published package's JavaScript (`npm pack` builds it too); the devnet does not need it.
BUILD_INPUTS := $(shell find node actors protocol api sim -type f -not -path '*/node_modules/*' -not -name '* *') tsconfig.json tsconfig.build.json
dist/node/cli.js: node_modules/.package-lock.json $(BUILD_INPUTS)
	npm run build

build: dist/node/cli.js

# The devnet from source: Node strips the types, and its compile cache makes the start as fast as a
# compiled one (docs/benchmarks.md#devnet-start).
run: install
	node node/bin.js devnet

# The s3 destination tests need a real S3 server: Ceph's radosgw on loopback (.ci/s3-radosgw.sh); the
# operators' tools test scrapes a devnet with Debian's prometheus; the devnet's terminal test runs in tmux.
TEST_SYSTEM_PACKAGES = radosgw ceph-mon ceph-osd prometheus tmux

test-deps:
	@if command -v radosgw >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 && command -v tmux >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing $(TEST_SYSTEM_PACKAGES) for the s3 destination, prometheus and terminal tests"; \
	  apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $(TEST_SYSTEM_PACKAGES); \
	else \
	  echo "make test needs radosgw, prometheus and tmux (s3 destination, prometheus and terminal tests); install them once with:" >&2; \
	  echo "  sudo apt-get install -y --no-install-recommends $(TEST_SYSTEM_PACKAGES)" >&2; \
	  exit 1; \
	fi

# TAP_NODE_OPTIONS: the suite runs with coverage off, so tap's per-process record of every loaded module
# (for coverage) is turned off in each test process and each process a test starts
# (test/helpers/tap-no-processinfo.mjs; about 0.2 s of CPU per node process, docs/testing.md).
TAP_NODE_OPTIONS = NODE_OPTIONS="$$NODE_OPTIONS --import=$(CURDIR)/test/helpers/tap-no-processinfo.mjs"

# beside_typecheck(TARGET, TSC ARGS, TAP ARGS): the typecheck runs beside the tests (it needs one core for
# 20 s, and the tests wait on chains, epochs and rate limits a third of the time); either failing fails
# the target.
define beside_typecheck
	@npx tsc -p tsconfig.json --noEmit $(2) & typecheck=$$!; \
	$(TAP_NODE_OPTIONS) npx tap $(3); tests=$$?; \
	wait $$typecheck; types=$$?; \
	[ $$types -eq 0 ] || echo "make $(1): the typecheck failed (above)" >&2; \
	[ $$types -eq 0 ] && [ $$tests -eq 0 ]
endef

# Three tap jobs (package.json) on two cores: the end-to-end files wait on chain epochs, rate limits and
# timeouts a good part of their time, and a third file fills those waits (docs/testing.md#timing-of-the-suite).
test: install test-deps
	$(call beside_typecheck,test,,)

# The edit loop: the typecheck and the in-process tests (actors, protocol, the API through inject, the
# simulator), without the browser, devnet and network tests of `make test`.
CHECK_TESTS = test/actors test/protocol test/api test/sim
# The typecheck is incremental (its state in .toolchain/): after an edit it checks what the edit touched.
# It runs beside the tests (one process against tap's two jobs: these files only compute, so a third
# job would only share the two cores more ways). tap matches --exclude within each directory it is given,
# so the browser test is named by a pattern that starts with **/.
check: install
	$(call beside_typecheck,check,--incremental --tsBuildInfoFile .toolchain/check.tsbuildinfo,--jobs=2 --exclude '**/dashboard.test.ts' $(CHECK_TESTS))

# What must hold on every supported Node line (.ci/run runs it on the other LTS): the CLI, a devnet, a
# transfer across it, two nodes over hyperswarm, the LevelDB store.
SMOKE_TESTS = test/node/cli.test.ts test/node/devnet.test.ts test/node/transfers/e2e-node.test.ts \
  test/node/two-nodes.test.ts test/node/storage.test.ts
test-smoke: install
	$(TAP_NODE_OPTIONS) npx tap --disable-coverage $(SMOKE_TESTS)

# The suite with both cores busy (a CPU hog at nice 19): finds tests that pass only on a quiet machine.
test-stress: install test-deps
	bash .ci/stress

typecheck: install
	npm run typecheck

clean:
	rm -rf dist .tap .bwnet
