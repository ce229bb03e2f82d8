# Two commands on a fresh clone: `make run` starts the devnet, `make test` runs the whole suite.
.PHONY: run test install typecheck bench clean

# `npm ci` refuses a lockfile that lacks optional platform packages the registry does not serve
# (msgpackr-extract's darwin/win32 builds); `npm install` then installs from the same lockfile.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund || npm install --no-audit --no-fund
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
