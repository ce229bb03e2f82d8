/** Bumped on any change to a message shape or to framing; peers on another version are dropped. */
export const PROTOCOL_VERSION = 2 // 2: announces bound to the connection's Noise keys; PRISM scores carry readiness

/** A control frame larger than this is refused before it is decoded (bulk bytes use their own channel). */
export const MAX_FRAME_BYTES = 256 * 1024 // 256 KiB
