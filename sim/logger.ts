// A logger for simulated nodes: thousands of actors log on every delivery, so lines are counted by
// level and event instead of written (the counts go into the report).
import type { Logger } from '../actors/ports.ts'

export class CountingLogger implements Logger {
  readonly counts: Record<'debug' | 'info' | 'warn' | 'error', number> = { debug: 0, info: 0, warn: 0, error: 0 }
  readonly events = new Map<string, number>()

  #note (level: 'debug' | 'info' | 'warn' | 'error', obj: object | string, msg?: string): void {
    this.counts[level]++
    if (level === 'debug') return
    const event = typeof obj === 'object' && obj !== null && 'event' in obj ? String((obj as { event: unknown }).event) : (msg ?? String(obj))
    const key = `${level}:${event}`
    this.events.set(key, (this.events.get(key) ?? 0) + 1)
  }

  debug (obj: object | string, msg?: string): void { this.#note('debug', obj, msg) }
  info (obj: object | string, msg?: string): void { this.#note('info', obj, msg) }
  warn (obj: object | string, msg?: string): void { this.#note('warn', obj, msg) }
  error (obj: object | string, msg?: string): void { this.#note('error', obj, msg) }
  child (): Logger { return this }
}
