// Binding an orchestrator or worker key to its participant's hotkey takes the hotkey's consent: a
// signature by that hotkey over what the binding grants (which organization's key, of which role, reads
// that participant's audit rows). Whoever asks for a binding without it gets 400 BWN_ERR_HOTKEY_PROOF,
// the operator included (DESIGN §10: participant keys are bound by proof, never by whoever asks).
// `bwnet keys prove-binding` makes the proof on the participant's side.
import { fromHex, toHex, sign, verify, type KeyPair } from '../../protocol/index.ts'

export const BINDING_PROOF_PATTERN = '^(0x)?[0-9a-fA-F]{128}$'

/** The bytes a hotkey signs to consent to a key of `organizationId` with `role` being bound to it. */
export function bindingMessage (organizationId: string, role: string, hotkey: string): Uint8Array {
  return new TextEncoder().encode(`bwnet key binding v1\norganization:${organizationId}\nrole:${role}\nhotkey:${hotkey}`)
}

/** The proof, as hex: the hotkey's sr25519 signature over bindingMessage. */
export function proveBinding (key: KeyPair, organizationId: string, role: string): string {
  return toHex(sign(key, bindingMessage(organizationId, role, key.address)))
}

/** True when `proof` is `hotkey`'s signature over this binding; false on any malformed input. */
export function bindingProven (organizationId: string, role: string, hotkey: string, proof: string | undefined): boolean {
  if (proof === undefined || !new RegExp(BINDING_PROOF_PATTERN).test(proof)) return false
  return verify(hotkey, bindingMessage(organizationId, role, hotkey), fromHex(proof))
}
