# Two commands on a fresh clone: `make run` starts the devnet, `make test` runs the whole suite.
# A build that fails part-way leaves no dist/node/cli.js behind to look up to date.
.DELETE_ON_ERROR:
.PHONY: run build test test-stress test-deps install typecheck bench clean

# Reproducible installs from the lockfile. msgpackr-extract is pinned (package.json `overrides`) to the
# release whose platform builds the registry serves for every platform, so the lockfile is complete.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.package-lock.json

# The devnet runs compiled, from dist/, rebuilt whenever a source file is newer: tsx's loader would cost
# each of its two threads ~40 MiB more and slow its start (docs/benchmarks.md#memory).
BUILD_INPUTS := $(shell find node actors protocol api sim -type f -not -path '*/node_modules/*' -not -name '* *') tsconfig.json tsconfig.build.json
dist/node/cli.js: node_modules/.package-lock.json $(BUILD_INPUTS)
	npm run build

build: dist/node/cli.js

run: build
	node dist/node/cli.js devnet

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

test: install test-deps
	npm test

# The suite with both cores busy (a CPU hog at nice 19): finds tests that pass only on a quiet machine.
test-stress: install test-deps
	bash .ci/stress

typecheck: install
	npm run typecheck

clean:
	rm -rf dist .tap .bwnet
