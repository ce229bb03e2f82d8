// The snapshot envelope (seed §2.1) and content-derived snapshot ids: the id is a UUID v5 (RFC 9562)
// of the RFC 8785 canonical JSON of everything else in the envelope. Every time inside an envelope
// comes from the chain (block times), never from a validator's clock, so two validators that saw the
// same evidence produce byte-identical envelopes with the same id.
import canonicalize from 'canonicalize'
import { v5 as uuidv5 } from 'uuid'

/** Namespace of bwnet snapshot ids (a fixed random UUID; changing it changes every id). */
export const SNAPSHOT_ID_NAMESPACE = 'cd976faa-42ae-47c3-bf61-30db9bc62e18'
/** Base of `formulaReference` URIs; the anchors are those of docs/formulas.md. */
export const DEFAULT_FORMULA_DOCS_URI = 'urn:bwnet:docs:formulas.md'

export interface SnapshotEnvelope<D> {
  snapshotId: string
  version: string
  observedAt: string
  sourceEpoch: number
  formulaReference: string
  publishedAt: string
  evidenceSequence: string
  data: D
}

export type EnvelopeContent<D> = Omit<SnapshotEnvelope<D>, 'snapshotId'>

/** The canonical bytes (as text) an envelope's id is derived from. */
export function canonicalContent (content: EnvelopeContent<unknown>): string {
  const text = canonicalize(content)
  if (text === undefined) throw new TypeError('envelope content is not JSON')
  return text
}

export function snapshotIdOf (content: EnvelopeContent<unknown>): string {
  return uuidv5(canonicalContent(content), SNAPSHOT_ID_NAMESPACE)
}

/** Seals content into an envelope, `snapshotId` first. */
export function sealEnvelope<D> (content: EnvelopeContent<D>): SnapshotEnvelope<D> {
  return { snapshotId: snapshotIdOf(content), ...content }
}

export function formulaReference (anchor: string, base = DEFAULT_FORMULA_DOCS_URI): string {
  return `${base}#${anchor}`
}
