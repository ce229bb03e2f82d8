// The commands the CLI prints for the user to run (resume, cancel, status) start with the invocation
// that started it, so they run as printed: docs/cli.md#printed-commands.
import { basename, delimiter, dirname, isAbsolute, relative } from 'node:path'

/**
 * How this CLI was started, as a shell would run it again from the same directory: `bwnet` when that
 * is what ran (a bin on PATH), `npm run bwnet --` under npm, else node with its flags and the script
 * (`node node/cli.ts`, `node dist/node/cli.js`). Printed commands start with it, so they run as
 * printed from a checkout too (docs/cli.md#printed-commands). A Node inside the directory (the one
 * `make` installs into .toolchain/ when the system's is too old) is named by its path: the shell the
 * user types into has the system's `node` first.
 */
export function invocation (env: NodeJS.ProcessEnv = process.env, argv1: string = process.argv[1] ?? 'bwnet', execArgv: string[] = process.execArgv, cwd: string = process.cwd(), execPath: string = process.execPath): string {
  if (env.npm_lifecycle_event === 'bwnet' && env.npm_command === 'run-script') return 'npm run bwnet --'
  const onPath = (env.PATH ?? '').split(delimiter).filter(d => d !== '')
  if (basename(argv1) === 'bwnet' && onPath.includes(dirname(argv1))) return 'bwnet'
  const shown = (p: string): string => { const r = relative(cwd, p); return r !== '' && !r.startsWith('..') && !isAbsolute(r) ? r : p }
  // The TypeScript loader is given by URL in some launches; by name it reads the same and stays short.
  const flags = execArgv.map(a => /\/node_modules\/tsx\//.test(a) ? 'tsx' : a.replace(/^(--import=).*\/node_modules\/tsx\/.*$/, '$1tsx'))
  if (basename(argv1) === 'bwnet') return quoteArg(argv1)
  const nodeWord = shown(execPath) === execPath ? 'node' : shown(execPath)
  return [nodeWord, ...flags, shown(argv1)].map(quoteArg).join(' ')
}

function quoteArg (a: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(a) ? a : `'${a.replace(/'/g, '\'\\\'\'')}'`
}

/** The command that resumes this one: the same arguments, without a key given on the command line. */
export function resumeCommand (argv: string[] = process.argv.slice(2), start: string = invocation()): string {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--key') { i++; continue }
    if (a.startsWith('--key=')) continue
    out.push(a)
  }
  return [start, ...out.map(quoteArg)].join(' ')
}
