// Loaded through NODE_OPTIONS by `make test` and `make check` (Makefile), so it runs first in tap's
// runner, in every test process and in every process a test starts. tap records, for its coverage and
// `--changed` bookkeeping, every module each Node process loads (@tapjs/processinfo: each file's line
// lengths and source maps), about 0.2 s of CPU per process that loads the node's modules. The suite runs
// with coverage off (package.json), so that record is never read: an exclusion matching every file turns
// it off. tap reads this variable when each process starts, and passes it on to the processes it spawns.
process.env._TAPJS_PROCESSINFO_EXCLUDE_ = '/./'
