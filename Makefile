# Two commands on a fresh clone: `make run` starts the devnet, `make test` runs the whole suite.
.PHONY: run test install typecheck bench clean

node_modules/.package-lock.json: package.json package-lock.json
	npm ci
	@touch $@

install: node_modules/.package-lock.json

run: install
	npm run bwnet -- devnet

test: install
	npm test

typecheck: install
	npm run typecheck

clean:
	rm -rf dist .tap .bwnet
