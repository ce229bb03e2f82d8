// A strict reader of the Prometheus text exposition format (0.0.4): every line must be a comment
// (`# HELP name text`, `# TYPE name counter|gauge|histogram|summary|untyped`) or a sample
// `name{label="value",…} value`; anything else throws, so a test that parses /metrics checks its format.
export interface Sample { name: string, labels: Record<string, string>, value: number }
export interface Exposition { samples: Sample[], types: Map<string, string> }

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*'
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+-?\\d+)?$`)
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/y

export function parsePrometheus (text: string): Exposition {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue
    if (line.startsWith('#')) {
      const m = new RegExp(`^# (HELP|TYPE) (${NAME})(?: (.*))?$`).exec(line)
      if (m === null) throw new Error(`line ${i + 1}: bad comment: ${line}`)
      if (m[1] === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3] ?? '')) throw new Error(`line ${i + 1}: bad type: ${line}`)
        types.set(m[2]!, m[3]!)
      }
      continue
    }
    const m = SAMPLE.exec(line)
    if (m === null) throw new Error(`line ${i + 1}: bad sample: ${line}`)
    const labels: Record<string, string> = {}
    const body = m[2] ?? ''
    LABEL.lastIndex = 0
    while (LABEL.lastIndex < body.length) {
      const at = LABEL.lastIndex
      const l = LABEL.exec(body)
      if (l === null || l.index !== at) throw new Error(`line ${i + 1}: bad labels: ${line}`)
      labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\')
    }
    const raw = m[3]!
    // Prometheus reads values with Go's ParseFloat: NaN and ±Inf in any case.
    const nan = /^nan$/i.test(raw)
    const value = /^\+?inf$/i.test(raw) ? Infinity : /^-inf$/i.test(raw) ? -Infinity : nan ? NaN : Number(raw)
    if (Number.isNaN(value) && !nan) throw new Error(`line ${i + 1}: bad value: ${line}`)
    samples.push({ name: m[1]!, labels, value })
  }
  return { samples, types }
}

/** The value of the one sample named `name` whose labels include `labels`; undefined when none; throws when several. */
export function sample (e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = e.samples.filter(s => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`)
  return found[0]?.value
}
