// The health and metrics server every role runs (`--metrics-port`): GET /healthz (liveness: the
// process answers), /readyz (readiness: started, not stopping, no actor down, the store taking writes;
// a 503 lists the reasons) and /metrics
// (Prometheus text). Plain node:http, apart from the API: it serves no user data and needs no key, so
// keep it on a private address (`--metrics-host`, default 127.0.0.1).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { NodeMetrics } from './metrics.ts'

export class MetricsServer {
  readonly #metrics: NodeMetrics
  readonly #notReady: () => string[]
  #server: Server | null = null
  url: string | null = null

  /** `notReady`: why the node is not ready now, empty when it is. */
  constructor (metrics: NodeMetrics, notReady: () => string[]) {
    this.#metrics = metrics
    this.#notReady = notReady
  }

  async listen (host: string, port: number): Promise<string> {
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0]
      const send = (status: number, type: string, body: string): void => {
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(req.method === 'HEAD' ? undefined : body)
      }
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'method not allowed\n')
      if (path === '/healthz') return send(200, 'application/json', '{"status":"ok"}\n')
      if (path === '/readyz') {
        const reasons = this.#notReady()
        return reasons.length === 0 ? send(200, 'application/json', '{"status":"ready"}\n') : send(503, 'application/json', JSON.stringify({ status: 'not_ready', reasons }) + '\n')
      }
      if (path === '/metrics') {
        this.#metrics.text().then((text) => send(200, this.#metrics.contentType, text), (err: Error) => send(500, 'text/plain', `metrics failed: ${err.message}\n`))
        return
      }
      send(404, 'text/plain', 'not found: /healthz, /readyz, /metrics\n')
    })
    server.keepAliveTimeout = 5_000
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(port, host, () => { server.off('error', reject); resolve() })
    })
    this.#server = server
    const a = server.address() as AddressInfo
    this.url = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`
    return this.url
  }

  async close (): Promise<void> {
    const server = this.#server
    if (server === null) return
    this.#server = null
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
