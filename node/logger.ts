// JSON logs with pino: one line per event, level from LOG_LEVEL, secrets redacted.
import { renameSync } from 'node:fs'
import { pino, type Logger as Pino, type DestinationStream } from 'pino'
import { redactLogObject, redactText } from '../api/log-redaction.ts'

export const REDACT_PATHS = [
  'req.headers.authorization', 'req.headers["x-api-key"]', 'headers.authorization', 'headers["x-api-key"]',
  '*.secretAccessKey', '*.secretKey', '*.seed', '*.apiKey', '*.key', '*.signature', 'key', 'apiKey'
]

export function createLogger (opts: { level?: string, name?: string, destination?: DestinationStream } = {}): Pino {
  return pino({
    name: opts.name ?? 'bwnet',
    level: opts.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    // Key-shaped values and URL signatures anywhere in a line (api/log-redaction.ts).
    formatters: { log: (obj) => redactLogObject(obj) },
    hooks: { logMethod (args, method) { method.apply(this, args.map(a => typeof a === 'string' ? redactText(a) : a) as Parameters<typeof method>) } },
    base: { pid: process.pid }
  }, opts.destination ?? defaultDestination())
}

/** Human-readable lines (pino-pretty) when stdout is a terminal, JSON lines otherwise; LOG_FORMAT=json|pretty forces one. */
function defaultDestination (): DestinationStream {
  const format = process.env.LOG_FORMAT ?? (process.stdout.isTTY === true ? 'pretty' : 'json')
  if (format === 'pretty') return pino.transport({ target: 'pino-pretty', options: { destination: 1, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' } }) as DestinationStream
  return pino.destination({ fd: 1, sync: false })
}

export type { Pino }

/** The devnet's two outputs: every line at `fileLevel` or above to `file`, and at `terminalLevel` or above to stdout. */
export interface DevnetLogOutputs { file: string, fileLevel?: string, terminalLevel: string }

/**
 * The devnet's logger: the whole log (info and above, or more with a lower `terminalLevel`) goes to a
 * file under `--data`, rotating the previous run's to `<file>.1`; the terminal gets only `terminalLevel`
 * and above (warnings by default), pretty on a terminal and JSON lines otherwise, as `createLogger`. Lines
 * the devnet's second thread hands over as finished JSON are written through `write` like its own.
 * `flush()` writes out what is buffered (at exit).
 */
export async function createDevnetLogger (out: DevnetLogOutputs): Promise<{ logger: Pino, flush (): void }> {
  const values = pino.levels.values
  const terminal = values[out.terminalLevel] ?? Infinity // silent
  const file = Math.min(values[out.fileLevel ?? 'info']!, terminal)
  try { renameSync(out.file, `${out.file}.1`) } catch {}
  const fileStream = pino.destination({ dest: out.file, sync: false, mkdir: true })
  const format = process.env.LOG_FORMAT ?? (process.stdout.isTTY === true ? 'pretty' : 'json')
  // Loaded only here: the client commands, which share this module, never pay for it.
  const pretty = format === 'pretty' ? (await import('pino-pretty')).prettyFactory({ colorize: process.stdout.isTTY === true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,name' }) : null
  const levelOf = (line: string): number => Number(/"level":(\d+)/.exec(line)?.[1] ?? values.info)
  const destination: DestinationStream = {
    write (line: string) {
      const level = levelOf(line)
      if (level >= file) fileStream.write(line.endsWith('\n') ? line : `${line}\n`)
      if (level >= terminal) process.stdout.write(pretty === null ? (line.endsWith('\n') ? line : `${line}\n`) : pretty(line))
    }
  }
  const name = Object.entries(values).find(([, v]) => v === file)?.[0] ?? 'info'
  return {
    logger: createLogger({ level: name, destination }),
    flush: () => { try { fileStream.flushSync() } catch {} }
  }
}
