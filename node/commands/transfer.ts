// `bwnet transfer put|list|status|cancel|verify`: send files (one, a directory, or stdin) through a bwnet API
// and follow them to completion (DESIGN §8). Credentials come from a profile (`bwnet login`), the
// environment or flags (profiles.ts). One module per subcommand under transfer/.
import { Command } from 'commander'
import { putCommand } from './transfer/put.ts'
import { listCommand } from './transfer/list.ts'
import { statusCommand } from './transfer/status.ts'
import { cancelCommand } from './transfer/cancel.ts'
import { verifyCommand } from './transfer/verify.ts'

export { resumeCommand, invocation, walk } from './transfer/put.ts'
export { sendableName } from './transfer/source.ts'
export { POLL_START_MS, POLL_MAX_MS, nextPollDelay, type PollSample } from '../transfers/delivery-source.ts'
export type { PutSummary } from '../transfers/put-summary.ts'

export function transferCommand (): Command {
  return new Command('transfer').description('send files through a bwnet API and follow them')
    .addCommand(putCommand())
    .addCommand(listCommand())
    .addCommand(statusCommand())
    .addCommand(cancelCommand())
    .addCommand(verifyCommand())
}
