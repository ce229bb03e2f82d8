// What every command module shares and that must stay cheap to load: the CLI's error classes (their
// `code` picks the exit code in cli.ts) and the default keystore path. No protocol or node imports
// here: `bwnet transfer …` and `bwnet login` load only this, profiles.ts and their own modules.

export const DEFAULT_KEYSTORE = '.bwnet/hotkey.json'

/** `bwnet --version` (test/node/packaging.test.ts keeps it equal to package.json and node.ts SOFTWARE). */
export const CLI_VERSION = '0.1.0'

/** An error the CLI prints as one line and exits 1 for. */
export class CliError extends Error {
  readonly code = 'BWN_ERR_CLI'
}

/** A bad command line (unknown or invalid option, missing key, missing argument): exit 2. */
export class UsageError extends Error {
  readonly code = 'BWN_ERR_USAGE'
}

/** Stopped by Ctrl-C (SIGINT): exit 130. */
export class Interrupted extends Error {
  readonly code = 'BWN_ERR_INTERRUPTED'
}
