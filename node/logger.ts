// JSON logs with pino: one line per event, level from LOG_LEVEL, secrets redacted.
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
