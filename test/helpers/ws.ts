// A real `ws` client for tests of the live routes: collects every message (parsed JSON), resolves once
// the socket is open, and rejects a refused upgrade with its HTTP status, content type and body.
import WebSocket from 'ws'

export interface WsClient<M> {
  ws: WebSocket
  messages: M[]
  closed: Promise<{ code: number, reason: string }>
}

export interface WsRefusal extends Error { status: number, contentType: string | undefined, headers: Record<string, string | string[] | undefined>, body: string }

export function connectWs<M = any> (url: string | URL, opts: WebSocket.ClientOptions = {}, protocols: string[] = []): Promise<WsClient<M>> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, protocols, opts)
    const messages: M[] = []
    const closed = new Promise<{ code: number, reason: string }>(res => ws.on('close', (code, reason) => res({ code, reason: String(reason) })))
    ws.on('message', (d) => messages.push(JSON.parse(String(d)) as M))
    ws.on('open', () => resolve({ ws, messages, closed }))
    ws.on('unexpected-response', (_req, res) => {
      let body = ''
      res.on('data', (c: Buffer) => { body += String(c) })
      res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, contentType: res.headers['content-type'], headers: res.headers, body })))
    })
    ws.on('error', reject)
  })
}
