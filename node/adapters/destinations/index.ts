// Destination drivers: where a transfer's bytes go (see actors/destination.ts for the port).
export { S3Driver, type S3DestinationConfig, type S3DriverOptions, MAX_PRESIGN_TTL_S, MIN_PART_BYTES, TRANSFER_ID_METADATA } from './s3.ts'
export { HttpDriver, type HttpDestinationConfig, type HttpDriverOptions } from './http.ts'
export { NodeSinkDriver, sinkRoutes, filenameProblem, type NodeSinkDriverOptions, type SinkRoutesOptions } from './node-sink.ts'
export { DestinationError } from './errors.ts'
