// Throttling of repeated log lines (refusals a peer can provoke at will).
/**
 * One log line per key (a sender, a sender and type) per `everyMs`: a flood is one line, not thousands.
 * Answers whether to log now and, when it does, remembers the time; forgets every key past `maxKeys`.
 */
export function logEvery (everyMs: number, maxKeys = 10_000): (key: string, now: number) => boolean {
  const loggedAt = new Map<string, number>()
  return (key, now) => {
    if ((loggedAt.get(key) ?? -Infinity) + everyMs > now) return false
    if (loggedAt.size >= maxKeys) loggedAt.clear()
    loggedAt.set(key, now)
    return true
  }
}
