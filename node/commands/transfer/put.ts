// `bwnet transfer put`: a file, a directory (-r) or stdin (-). Machine output (--json, or stdout not a
// terminal): a single-file put prints the transfer id first and one JSON summary line last; progress and
// messages go to stderr. Usage, resume, exit codes and the state file: docs/cli.md.
import { Command, Option } from 'commander'
import { readdir, stat } from 'node:fs/promises'
import { basename, join, relative, sep } from 'node:path'
import picomatch from 'picomatch'
import PQueue from 'p-queue'
import { CliError, UsageError, Interrupted } from '../common.ts'
import { statePathFor } from '../../transfers/upload-state.ts'
import { formatBytes, formatDuration } from '../../transfers/progress.ts'
import { addClientOptions, resolveCredentials } from '../profiles.ts'
import type { PutSummary } from '../../transfers/put-summary.ts'
import { GaveUp, TransferEnded } from '../../errors.ts'
import { fileSource, stdinSource, sendableName } from './source.ts'
import { invocation, resumeCommand } from './invocation.ts'
export { invocation, resumeCommand }
import { newSession, putOne, type PutOptions, type Session } from './put-one.ts'
import {
  DEFAULT_PARALLEL, MAX_PARALLEL, DEFAULT_TRANSFERS, MAX_TRANSFERS, DEFAULT_TIER, DEFAULT_WAIT_TIMEOUT_S, EXIT_STOPPED_EARLY,
  positiveInt, rateArg, machineOutput, humanResult, table, collect
} from './shared.ts'

const MAX_DIRECTORY_FILES = 100_000

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

export interface WalkedFile { path: string, rel: string, size: number }
export interface Walk {
  /** Regular files to send, sorted, `rel` relative to the directory with '/' between segments. */
  files: WalkedFile[]
  /** Empty files: a transfer holds at least one byte; reported, not sent. */
  empty: string[]
  /** Hidden entries (a leading dot) and what lies below them: names destinations refuse. */
  hidden: string[]
  /** Symbolic links, sockets, devices: not followed, not sent. */
  special: string[]
  /** Files --include/--exclude left out. */
  excluded: number
}

/**
 * Every file under `dir` (following no symlinks), sorted, with paths relative to it: the ones to send,
 * and every one left out with why. --include keeps only the paths matching one of its globs (when given),
 * --exclude then drops those matching one of its; globs match the relative path (`**` crosses '/',
 * a glob without '/' matches the base name at any depth, as rsync and rclone do).
 */
export async function walk (dir: string, filters: { include?: string[], exclude?: string[] } = {}): Promise<Walk> {
  const out: Walk = { files: [], empty: [], hidden: [], special: [], excluded: 0 }
  const glob = (patterns: string[] | undefined): ((rel: string) => boolean) | null => {
    if (patterns === undefined || patterns.length === 0) return null
    const byPath = patterns.filter(p => p.includes('/'))
    const byBase = patterns.filter(p => !p.includes('/'))
    const path = byPath.length > 0 ? picomatch(byPath) : null
    const base = byBase.length > 0 ? picomatch(byBase) : null
    return (rel: string) => (path !== null && path(rel)) || (base !== null && base(rel.slice(rel.lastIndexOf('/') + 1)))
  }
  const include = glob(filters.include)
  const exclude = glob(filters.exclude)
  const visit = async (d: string): Promise<void> => {
    const entries = await readdir(d, { withFileTypes: true })
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    for (const e of entries) {
      const p = join(d, e.name)
      const rel = relative(dir, p).split(sep).join('/')
      if (e.name.startsWith('.')) { out.hidden.push(e.isDirectory() ? `${rel}/` : rel); continue }
      if (e.isDirectory()) { await visit(p); continue }
      if (!e.isFile()) { out.special.push(rel); continue }
      if ((include !== null && !include(rel)) || (exclude !== null && exclude(rel))) { out.excluded++; continue }
      const size = (await stat(p)).size
      if (size === 0) { out.empty.push(rel); continue }
      out.files.push({ path: p, rel, size })
      if (out.files.length > MAX_DIRECTORY_FILES) throw new UsageError(`${dir} holds more than ${MAX_DIRECTORY_FILES} files`)
    }
  }
  await visit(dir)
  return out
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
  if (!isDir && (opts.include !== undefined || opts.exclude !== undefined)) throw new UsageError('--include and --exclude choose files of a directory put (-r)')
  if (opts.destination !== undefined && opts.dest !== undefined && opts.destination !== opts.dest) throw new UsageError('--destination and --dest disagree')
  if (opts.verbose === true && opts.quiet === true) throw new UsageError('-v and -q disagree')

  const { signal, release } = interruptOnSigint()
  const session = newSession(creds, opts, signal)
  const machine = machineOutput(opts)
  try {
    if (isDir) await putDirectory(source, opts, session, machine)
    else await putSingle(source, isStdin, opts, session, machine, info?.size ?? null)
  } finally {
    session.reporter.stop()
    release()
  }
}

/** Text for people (stderr): nothing under -q, the details only under -v. */
function say (opts: PutOptions, s: Session, text: string, level: 'info' | 'verbose' = 'info'): void {
  if (opts.quiet === true || (level === 'verbose' && opts.verbose !== true)) return
  s.reporter.message(text)
}

async function putSingle (source: string, isStdin: boolean, opts: PutOptions, s: Session, machine: boolean, size: number | null): Promise<void> {
  const name = opts.name ?? (isStdin ? 'stdin' : basename(source))
  if (size === 0) {
    // A transfer holds at least one byte: an empty file is reported, not sent, and not an error.
    if (machine) process.stdout.write(JSON.stringify({ event: 'transfer_skip', file: source, reason: 'empty' }) + '\n')
    say(opts, s, `skipped ${source}: empty (a transfer holds at least one byte; nothing was sent)`)
    return
  }
  if (opts.dryRun === true) {
    const sendAs = sendableName(name)
    if (machine) process.stdout.write(JSON.stringify({ event: 'transfer_dry_run', api: s.creds.api, files: [{ file: isStdin ? '-' : source, name: sendAs, size: isStdin ? opts.size! : size }] }) + '\n')
    else process.stdout.write(`would send ${isStdin ? 'stdin' : source} as ${sendAs} (${formatBytes(isStdin ? opts.size! : size!)}) to ${s.creds.api}\n(dry run: nothing was sent)\n`)
    return
  }
  const src = isStdin ? stdinSource(opts.size!, name) : await fileSource(source, name)
  const statePath = isStdin ? null : (opts.state ?? statePathFor(source))
  let summary: PutSummary
  s.reporter.start()
  try {
    summary = await putOne(src, opts, s, {
      statePath,
      onId: (id, resumed) => {
        // First line of stdout: scripts read the id from here while the upload runs.
        if (machine) process.stdout.write(`${id}\n`)
        say(opts, s, `${resumed ? 'resuming' : 'sending'} ${isStdin ? 'stdin' : source} as transfer ${id} (${formatBytes(src.size)})`)
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
        ? `a stdin upload cannot resume; free its slot with: ${invocation()} transfer cancel ${err.summary.transfer_id}`
        : `resume with: ${resumeCommand()}`
      process.stderr.write(`interrupted: transfer ${err.summary.transfer_id}, ${sent}; ${how}\n`)
      throw new Interrupted('')
    }
    throw err
  }
  s.reporter.stop()
  if (machine) process.stdout.write(JSON.stringify(summary) + '\n')
  else if (opts.quiet !== true) process.stdout.write(humanResult(summary, isStdin ? 'stdin' : source) + '\n')
  if (summary.status === 'stopped') { process.exitCode = EXIT_STOPPED_EARLY; return }
  if (summary.error !== null) throw new TransferEnded(summary.error.code, `transfer ${summary.transfer_id} ${summary.status}: ${summary.error.message}`)
}

interface FileResult { file: string, size: number, summary: PutSummary | null, error: { code: string, message: string } | null }

async function putDirectory (dir: string, opts: PutOptions, s: Session, machine: boolean): Promise<void> {
  const walked = await walk(dir, opts)
  const { files } = walked
  const leftOut = [
    ...walked.empty.map(f => `${f} (empty)`), ...walked.hidden.map(f => `${f} (hidden)`), ...walked.special.map(f => `${f} (not a regular file)`)
  ]
  const notes = [
    walked.empty.length > 0 ? `${walked.empty.length} empty` : '', walked.hidden.length > 0 ? `${walked.hidden.length} hidden` : '',
    walked.special.length > 0 ? `${walked.special.length} not regular` : '', walked.excluded > 0 ? `${walked.excluded} excluded by --include/--exclude` : ''
  ].filter(n => n !== '')
  // Each file keeps its path below the directory: a.txt, sub/deeper/b.txt (docs/cli.md#directories).
  const names = files.map(f => { try { return { name: sendableName(f.rel, 'rename it or leave it out with --exclude'), error: null } } catch (err) { return { name: f.rel, error: err as Error } } })
  const total = formatBytes(files.reduce((a, f) => a + f.size, 0))
  if (opts.dryRun === true) {
    if (machine) {
      process.stdout.write(JSON.stringify({
        event: 'transfer_dry_run', api: s.creds.api, source: dir,
        files: files.map((f, i) => ({ file: f.rel, name: names[i]!.name, size: f.size, error: names[i]!.error?.message ?? null })),
        left_out: { empty: walked.empty, hidden: walked.hidden, special: walked.special, excluded: walked.excluded }
      }) + '\n')
    } else {
      process.stdout.write(table([['FILE', 'SIZE', 'SENT AS'], ...files.map((f, i) => [f.rel, formatBytes(f.size), names[i]!.error !== null ? `refused: ${names[i]!.error!.message}` : names[i]!.name])]))
      for (const l of leftOut) process.stdout.write(`left out: ${l}\n`)
      process.stdout.write(`would send ${files.length} files (${total}) to ${s.creds.api}${notes.length > 0 ? `; left out: ${notes.join(', ')}` : ''}\n(dry run: nothing was sent)\n`)
    }
    return
  }
  if (files.length === 0) throw new CliError(`${dir} holds no file to send${notes.length > 0 ? ` (left out: ${notes.join(', ')})` : ''}`)
  s.totals.files = { done: 0, failed: 0, total: files.length }
  say(opts, s, `sending ${files.length} files (${total}) from ${dir}, ${opts.transfers} at a time${notes.length > 0 ? `; leaving out ${notes.join(', ')}${opts.verbose === true ? '' : ' (-v lists them)'}` : ''}`)
  for (const l of leftOut) say(opts, s, `left out: ${l}`, 'verbose')
  s.reporter.start()
  const results: FileResult[] = files.map(f => ({ file: f.rel, size: f.size, summary: null, error: null }))
  const queue = new PQueue({ concurrency: opts.transfers })
  let fatal: unknown = null
  for (const [i, f] of files.entries()) {
    void queue.add(async () => {
      if (s.signal.aborted || fatal !== null) return
      try {
        if (names[i]!.error !== null) throw names[i]!.error
        const src = await fileSource(f.path, names[i]!.name, 'rename it or leave it out with --exclude')
        const summary = await putOne(src, opts, s, { statePath: statePathFor(f.path) })
        results[i]!.summary = summary
        results[i]!.error = summary.error
        if (summary.error !== null) s.totals.files!.failed++
        else s.totals.files!.done++
        say(opts, s, `${f.rel}: ${summary.status} ${summary.transfer_id} as ${summary.filename}, sha256 ${summary.sha256 ?? '-'}`, 'verbose')
      } catch (err) {
        // Nothing listens at the API: every other file would fail the same way.
        if ((err as { code?: string }).code === 'BWN_ERR_CLI_API_UNREACHABLE') { fatal ??= err; queue.clear(); return }
        const gave = err instanceof GaveUp ? err : null
        results[i]!.summary = gave?.summary ?? null
        if (gave?.cause instanceof Interrupted) return
        results[i]!.error = gave !== null ? { code: gave.code, message: gave.detail } : { code: (err as { code?: string }).code ?? 'BWN_ERR_CLI', message: (err as Error).message }
        s.totals.files!.failed++
        say(opts, s, `${f.rel}: ${results[i]!.error!.code}: ${results[i]!.error!.message}`)
      }
    })
  }
  await queue.onIdle()
  s.reporter.stop()
  if (fatal !== null) throw fatal
  const interrupted = s.signal.aborted
  const failed = results.filter(r => r.error !== null).length
  const completed = results.filter(r => r.error === null && r.summary !== null && r.summary.status !== 'interrupted').length
  const rows = [['FILE', 'SIZE', 'TRANSFER', 'STATUS', 'TIME', 'SHA256'], ...results.map(r => [
    r.file, formatBytes(r.size), r.summary?.transfer_id ?? '-',
    r.error !== null ? `${r.summary?.status ?? 'failed'} (${r.error.code})` : r.summary?.status ?? 'not started',
    r.summary !== null ? formatDuration(r.summary.elapsed_ms) : '-',
    r.summary?.sha256 ?? '-'
  ]), ...walked.empty.map(f => [f, '0 B', '-', 'skipped (empty)', '-', '-'])]
  const text = table(rows) + `${completed} of ${files.length} files ${opts.wait ? 'completed' : 'finalized'}${failed > 0 ? `, ${failed} failed` : ''}${interrupted ? ', interrupted' : ''}${notes.length > 0 ? `; left out: ${notes.join(', ')}` : ''}\n`
  if (machine) {
    if (opts.quiet !== true) process.stderr.write(text)
    process.stdout.write(JSON.stringify({
      event: 'transfer_put_batch', source: dir, files_total: files.length, files_done: completed, files_failed: failed, interrupted,
      files: results.map(r => ({ file: r.file, size: r.size, transfer_id: r.summary?.transfer_id ?? null, status: r.summary?.status ?? null, error: r.error, summary: r.summary })),
      left_out: { empty: walked.empty, hidden: walked.hidden, special: walked.special, excluded: walked.excluded }
    }) + '\n')
  } else if (opts.quiet !== true) {
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
    .option('--name <name>', 'name to send: a filename or a relative path (default: the base name; "stdin" for -)')
    .option('--include <glob>', 'directory put: send only files whose relative path matches (repeatable; a glob without / matches the base name)', collect)
    .option('--exclude <glob>', 'directory put: leave out files whose relative path matches (repeatable; applied after --include)', collect)
    .option('--dry-run', 'show what would be sent (names, sizes, what is left out) and send nothing: no request to the API')
    .option('-v, --verbose', 'more detail on stderr: each file as it ends, every file left out')
    .option('-q, --quiet', 'nothing on stderr but errors; no progress, no human summary (machine output is unchanged)')
    .option('--no-wait', 'return once finalized instead of waiting for delivery')
    .option('--no-progress', 'no progress bar or progress lines')
    .option('--json', 'machine output: the id first, one JSON summary line last (the default when stdout is not a terminal)')
    .option('--state <file>', 'resume state file (default: $BWN_STATE_DIR or ~/.bwnet/transfers, named by the file\'s path)')
    .option('--wait-timeout-s <s>', 'give up waiting after this many seconds', positiveInt(365 * 24 * 3600), DEFAULT_WAIT_TIMEOUT_S)
    .addOption(new Option('--max-chunks <n>', 'send at most N chunks, then stop (exit 3) as if interrupted').argParser(positiveInt(1_000_000)).hideHelp())
    .action(putAction)
}
