// `bwnet transfer put`: a file, a directory (-r) or stdin (-). Machine output (--json, or stdout not a
// terminal): a single-file put prints the transfer id first and one JSON summary line last; progress and
// messages go to stderr. Usage, resume, exit codes and the state file: docs/cli.md.
import { Command, Option } from 'commander'
import { readdir, stat } from 'node:fs/promises'
import { basename, join, relative } from 'node:path'
import PQueue from 'p-queue'
import { CliError, UsageError, Interrupted } from '../common.ts'
import { statePathFor } from '../../transfers/upload-state.ts'
import { formatBytes, formatDuration } from '../../transfers/progress.ts'
import { addClientOptions, resolveCredentials } from '../profiles.ts'
import type { PutSummary } from '../../transfers/put-summary.ts'
import { GaveUp, TransferEnded } from '../../errors.ts'
import { fileSource, stdinSource } from './source.ts'
import { newSession, putOne, type PutOptions, type Session } from './put-one.ts'
import {
  DEFAULT_PARALLEL, MAX_PARALLEL, DEFAULT_TRANSFERS, MAX_TRANSFERS, DEFAULT_TIER, DEFAULT_WAIT_TIMEOUT_S, EXIT_STOPPED_EARLY,
  positiveInt, rateArg, machineOutput, humanResult, table
} from './shared.ts'

const MAX_DIRECTORY_FILES = 100_000

/** The command that resumes this one: the same arguments, without a key given on the command line. */
export function resumeCommand (argv: string[] = process.argv.slice(2)): string {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--key') { i++; continue }
    if (a.startsWith('--key=')) continue
    out.push(a)
  }
  const quote = (a: string): string => /^[A-Za-z0-9_./:=@%+,-]+$/.test(a) ? a : `'${a.replace(/'/g, '\'\\\'\'')}'`
  return ['bwnet', ...out.map(quote)].join(' ')
}

/** Ctrl-C: the first aborts the put (it then prints how to resume and exits 130); a second exits at once. */
function interruptOnSigint (): { signal: AbortSignal, release: () => void } {
  const controller = new AbortController()
  const onSigint = (): void => {
    if (controller.signal.aborted) process.exit(130)
    controller.abort(new Interrupted('interrupted'))
  }
  process.on('SIGINT', onSigint)
  return { signal: controller.signal, release: () => { process.off('SIGINT', onSigint) } }
}

/**
 * Every regular, non-empty file under `dir` (following no symlinks), sorted, with paths relative to
 * it. Hidden entries (a leading dot) are skipped: destinations refuse such names.
 */
async function walk (dir: string, recursive: boolean): Promise<{ files: Array<{ path: string, rel: string, size: number }>, skipped: number }> {
  const out: Array<{ path: string, rel: string, size: number }> = []
  let skipped = 0
  const visit = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true })
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    for (const e of entries) {
      if (e.name.startsWith('.')) { skipped++; continue }
      const p = join(d, e.name)
      if (e.isDirectory()) { if (recursive) await visit(p); continue }
      if (!e.isFile()) continue
      const size = (await stat(p)).size
      if (size === 0) { skipped++; continue }
      out.push({ path: p, rel: relative(dir, p), size })
      if (out.length > MAX_DIRECTORY_FILES) throw new UsageError(`${dir} holds more than ${MAX_DIRECTORY_FILES} files`)
    }
  }
  await visit(dir)
  return { files: out, skipped }
}

async function putAction (source: string, opts: PutOptions): Promise<void> {
  const creds = await resolveCredentials(opts)
  const isStdin = source === '-'
  let info: Awaited<ReturnType<typeof stat>> | null = null
  if (!isStdin) info = await stat(source).catch((err: NodeJS.ErrnoException) => { throw new CliError(`cannot read ${source}: ${err.code ?? err.message}`) })
  const isDir = info?.isDirectory() === true
  if (isStdin && opts.size === undefined) throw new UsageError('a put from stdin (-) needs --size <bytes>')
  if (!isStdin && opts.size !== undefined) throw new UsageError('--size is for a put from stdin (-)')
  if (isDir && opts.recursive !== true) throw new UsageError(`${source} is a directory: pass --recursive (-r) to send every file in it`)
  if (isDir && opts.state !== undefined) throw new UsageError('--state names one file\'s state; a directory put keeps one per file')
  if (opts.destination !== undefined && opts.dest !== undefined && opts.destination !== opts.dest) throw new UsageError('--destination and --dest disagree')

  const { signal, release } = interruptOnSigint()
  const session = newSession(creds, opts, signal)
  const machine = machineOutput(opts)
  try {
    if (isDir) await putDirectory(source, opts, session, machine)
    else await putSingle(source, isStdin, opts, session, machine)
  } finally {
    session.reporter.stop()
    release()
  }
}

async function putSingle (source: string, isStdin: boolean, opts: PutOptions, s: Session, machine: boolean): Promise<void> {
  const src = isStdin ? stdinSource(opts.size!, opts.name ?? 'stdin') : await fileSource(source, opts.name ?? basename(source))
  const statePath = isStdin ? null : (opts.state ?? statePathFor(source))
  let summary: PutSummary
  s.reporter.start()
  try {
    summary = await putOne(src, opts, s, {
      statePath,
      onId: (id, resumed) => {
        // First line of stdout: scripts read the id from here while the upload runs.
        if (machine) process.stdout.write(`${id}\n`)
        s.reporter.message(`${resumed ? 'resuming' : 'sending'} ${isStdin ? 'stdin' : source} as transfer ${id} (${formatBytes(src.size)})`)
      },
      onPlanned: () => s.reporter.tick()
    })
  } catch (err) {
    s.reporter.stop()
    if (!(err instanceof GaveUp)) throw err
    err.summary.error = { code: err.code, message: err.detail }
    if (machine) process.stdout.write(JSON.stringify(err.summary) + '\n')
    if (err.cause instanceof Interrupted) {
      const sent = `${err.summary.chunks_skipped + err.summary.chunks_uploaded}/${err.summary.chunks_total} chunks uploaded`
      const how = isStdin
        ? `a stdin upload cannot resume; free its slot with: bwnet transfer cancel ${err.summary.transfer_id}`
        : `resume with: ${resumeCommand()}`
      process.stderr.write(`interrupted: transfer ${err.summary.transfer_id}, ${sent}; ${how}\n`)
      throw new Interrupted('')
    }
    throw err
  }
  s.reporter.stop()
  if (machine) process.stdout.write(JSON.stringify(summary) + '\n')
  else process.stdout.write(humanResult(summary, isStdin ? 'stdin' : source) + '\n')
  if (summary.status === 'stopped') { process.exitCode = EXIT_STOPPED_EARLY; return }
  if (summary.error !== null) throw new TransferEnded(summary.error.code, `transfer ${summary.transfer_id} ${summary.status}: ${summary.error.message}`)
}

interface FileResult { file: string, size: number, summary: PutSummary | null, error: { code: string, message: string } | null }

async function putDirectory (dir: string, opts: PutOptions, s: Session, machine: boolean): Promise<void> {
  const { files, skipped } = await walk(dir, true)
  if (files.length === 0) throw new CliError(`${dir} holds no non-empty files`)
  s.totals.files = { done: 0, failed: 0, total: files.length }
  s.reporter.message(`sending ${files.length} files (${formatBytes(files.reduce((a, f) => a + f.size, 0))}) from ${dir}, ${opts.transfers} at a time${skipped > 0 ? `; skipping ${skipped} empty or hidden` : ''}`)
  s.reporter.start()
  const results: FileResult[] = files.map(f => ({ file: f.rel, size: f.size, summary: null, error: null }))
  const queue = new PQueue({ concurrency: opts.transfers })
  for (const [i, f] of files.entries()) {
    void queue.add(async () => {
      if (s.signal.aborted) return
      try {
        // Destinations hold flat names: a file is sent under its base name (a taken name gets -1, -2…).
        const src = await fileSource(f.path, basename(f.path))
        const summary = await putOne(src, opts, s, { statePath: statePathFor(f.path) })
        results[i]!.summary = summary
        results[i]!.error = summary.error
        if (summary.error !== null) s.totals.files!.failed++
        else s.totals.files!.done++
      } catch (err) {
        const gave = err instanceof GaveUp ? err : null
        results[i]!.summary = gave?.summary ?? null
        if (gave?.cause instanceof Interrupted) return
        results[i]!.error = gave !== null ? { code: gave.code, message: gave.detail } : { code: (err as { code?: string }).code ?? 'BWN_ERR_CLI', message: (err as Error).message }
        s.totals.files!.failed++
        s.reporter.message(`${f.rel}: ${results[i]!.error!.code}: ${results[i]!.error!.message}`)
      }
    })
  }
  await queue.onIdle()
  s.reporter.stop()
  const interrupted = s.signal.aborted
  const failed = results.filter(r => r.error !== null).length
  const completed = results.filter(r => r.error === null && r.summary !== null && r.summary.status !== 'interrupted').length
  const rows = [['FILE', 'SIZE', 'TRANSFER', 'STATUS', 'TIME'], ...results.map(r => [
    r.file, formatBytes(r.size), r.summary?.transfer_id ?? '-',
    r.error !== null ? `${r.summary?.status ?? 'failed'} (${r.error.code})` : r.summary?.status ?? 'not started',
    r.summary !== null ? formatDuration(r.summary.elapsed_ms) : '-'
  ])]
  const text = table(rows) + `${completed} of ${files.length} files ${opts.wait ? 'completed' : 'finalized'}${failed > 0 ? `, ${failed} failed` : ''}${interrupted ? ', interrupted' : ''}\n`
  if (machine) {
    process.stderr.write(text)
    process.stdout.write(JSON.stringify({
      event: 'transfer_put_batch', source: dir, files_total: files.length, files_done: completed, files_failed: failed, interrupted,
      files: results.map(r => ({ file: r.file, size: r.size, transfer_id: r.summary?.transfer_id ?? null, status: r.summary?.status ?? null, error: r.error, summary: r.summary }))
    }) + '\n')
  } else {
    process.stdout.write(text)
  }
  if (interrupted) {
    process.stderr.write(`interrupted: ${completed}/${files.length} files done; resume with: ${resumeCommand()}\n`)
    throw new Interrupted('')
  }
  if (failed > 0) throw new TransferEnded('BWN_ERR_CLI', `${failed} of ${files.length} files failed (see the table)`)
}

export function putCommand (): Command {
  return addClientOptions(new Command('put').argument('<source>'))
    .description('upload a file, a directory (-r) or stdin (-) in parallel chunks and wait until delivered; re-run to resume')
    .option('-r, --recursive', 'SOURCE is a directory: send every file under it, one transfer per file')
    .option('--destination <id>', 'destination id (default: the node\'s default destination)')
    .addOption(new Option('--dest <id>', 'same as --destination').hideHelp())
    .option('--tier <name>', 'transfer tier', DEFAULT_TIER)
    .option('--hotkey <ss58>', 'sender hotkey (default: the keystore\'s, BWN_KEYSTORE or .bwnet/hotkey.json, else a new one)')
    .option('--parallel <n>', `chunk uploads in flight per file (1..${MAX_PARALLEL})`, positiveInt(MAX_PARALLEL), DEFAULT_PARALLEL)
    .option('--transfers <n>', `files in flight for a directory (1..${MAX_TRANSFERS})`, positiveInt(MAX_TRANSFERS), DEFAULT_TRANSFERS)
    .option('--bwlimit <rate>', 'upload bandwidth limit in bytes/s, over all files: 512K, 10M, 1.5G', rateArg)
    .option('--size <bytes>', 'size of the data on stdin (SOURCE is -)', positiveInt(Number.MAX_SAFE_INTEGER))
    .option('--name <filename>', 'file name to send (default: the base name; "stdin" for -)')
    .option('--no-wait', 'return once finalized instead of waiting for delivery')
    .option('--no-progress', 'no progress bar or progress lines')
    .option('--json', 'machine output: the id first, one JSON summary line last (the default when stdout is not a terminal)')
    .option('--state <file>', 'resume state file (default: $BWN_STATE_DIR or ~/.bwnet/transfers, named by the file\'s path)')
    .option('--wait-timeout-s <s>', 'give up waiting after this many seconds', positiveInt(365 * 24 * 3600), DEFAULT_WAIT_TIMEOUT_S)
    .addOption(new Option('--max-chunks <n>', 'send at most N chunks, then stop (exit 3) as if interrupted').argParser(positiveInt(1_000_000)).hideHelp())
    .action(putAction)
}
