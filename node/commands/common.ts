// What every command module shares and that must stay cheap to load: the CLI's error classes (their
// `code` picks the exit code in cli.ts) and the default keystore path. No protocol or node imports
// here: `bwnet transfer …` and `bwnet login` load only this, profiles.ts and their own modules.

export const DEFAULT_KEYSTORE = '.bwnet/hotkey.json'

/** `bwnet --version` (test/node/packaging.test.ts keeps it equal to package.json and node.ts SOFTWARE). */
export const CLI_VERSION = '0.1.0'

// The CLI's error classes live with the node layer's others (node/errors.ts, type imports only: cheap).
export { CliError, UsageError, Interrupted } from '../errors.ts'
