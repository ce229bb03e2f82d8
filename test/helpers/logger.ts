// Loggers for tests: silent, or capturing every line as parsed JSON.
import { pino } from 'pino'
import { Writable } from 'node:stream'
import { REDACT_PATHS } from '../../node/logger.ts'

export function silentLogger () {
  return pino({ level: 'silent' })
}

export function capturingLogger (level = 'debug') {
  const lines: Array<Record<string, any>> = []
  const stream = new Writable({
    write (chunk, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l))
      cb()
    }
  })
  const logger = pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, stream)
  return { logger, lines }
}
