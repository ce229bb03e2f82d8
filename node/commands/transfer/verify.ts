// `bwnet transfer verify ID FILE`: is FILE what the transfer carried? FILE is cut into the transfer's
// chunks and each chunk's sha256 compared with the one the API holds (GET /transfers/{id}/chunks): the
// network checks every delivery against those hashes, so a completed transfer whose chunks all match
// delivered exactly FILE. Exit 0 when they match and the transfer completed; 1 otherwise, naming the
// first chunk (and its byte range) that differs.
import { Command } from 'commander'
import { createHash } from 'node:crypto'
import { open, stat } from 'node:fs/promises'
import { TransferApiClient } from '../../transfers/api-client.ts'
import { CliError } from '../common.ts'
import { VerifyMismatch } from '../../errors.ts'
import { addClientOptions, resolveCredentials, type ClientFlags } from '../profiles.ts'
import { asNotFound, machineOutput, resolveId } from './shared.ts'

const READ_BYTES = 4 * 1024 * 1024

export function verifyCommand (): Command {
  return addClientOptions(new Command('verify').argument('<id>').argument('<file>'))
    .description('check that FILE is what a transfer carried: every chunk\'s sha256 against the API\'s (exit 1 on any difference)')
    .option('--json', 'one JSON line (the default when stdout is not a terminal)')
    .action(async (given: string, file: string, opts: ClientFlags & { json?: boolean }) => {
      const creds = await resolveCredentials(opts)
      const client = new TransferApiClient(creds.api, creds.key)
      const info = await stat(file).catch((err: NodeJS.ErrnoException) => { throw new CliError(`cannot read ${file}: ${err.code ?? err.message}`) })
      if (!info.isFile()) throw new CliError(`${file} is not a regular file`)
      let id: string
      try { id = await resolveId(client, given) } catch (err) { throw asNotFound(err, given) }
      const [record, held] = await Promise.all([client.get(id), client.chunks(id)])
      const whole = createHash('sha256')
      const fh = await open(file, 'r')
      let mismatch: string | null = info.size !== record.total_size ? `${file} has ${info.size} bytes, the transfer ${record.total_size}` : null
      try {
        const byIndex = new Map(held.items.map(c => [c.index, c]))
        const buf = Buffer.allocUnsafe(READ_BYTES)
        for (let index = 0; index < record.total_chunks && mismatch === null; index++) {
          const start = index * record.chunk_size
          const length = Math.min(record.chunk_size, record.total_size - start)
          const h = createHash('sha256')
          for (let done = 0; done < length;) {
            const { bytesRead } = await fh.read(buf, 0, Math.min(READ_BYTES, length - done), start + done)
            if (bytesRead === 0) break
            h.update(buf.subarray(0, bytesRead)); whole.update(buf.subarray(0, bytesRead))
            done += bytesRead
          }
          const want = byIndex.get(index)
          const got = h.digest('hex')
          if (want === undefined) mismatch = `chunk ${index} (bytes ${start}..${start + length - 1}) was never received by the API`
          else if (want.sha256 !== got) mismatch = `chunk ${index} (bytes ${start}..${start + length - 1}) differs: sha256 ${got} here, ${want.sha256} in the transfer`
        }
      } finally { await fh.close() }
      const sha256 = mismatch === null ? whole.digest('hex') : null
      const ok = mismatch === null && record.status === 'completed'
      const result = { event: 'transfer_verify', transfer_id: id, file, status: record.status, chunks: record.total_chunks, match: mismatch === null, sha256, detail: mismatch }
      if (machineOutput(opts)) process.stdout.write(JSON.stringify(result) + '\n')
      else if (ok) process.stdout.write(`ok: ${file} is what transfer ${id} delivered (${record.total_chunks} chunks, sha256 ${sha256})\n`)
      if (mismatch !== null) throw new VerifyMismatch(`${file} is not what transfer ${id} carried: ${mismatch}`)
      if (!ok) throw new CliError(`${file} matches the chunks transfer ${id} received, but the transfer is ${record.status}, not completed`)
    })
}
