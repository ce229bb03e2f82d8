// Destination drivers: where a transfer's bytes go (see actors/destination.ts for the port).
// The S3 driver is not re-exported: it loads the AWS SDK (~20 MiB per thread), which only an orchestrator
// with an s3 destination needs, so DestinationRegistry imports it on first use.
export { HttpDriver, type HttpDestinationConfig, type HttpDriverOptions } from './http.ts'
export { NodeSinkDriver, sinkRoutes, filenameProblem, type NodeSinkDriverOptions, type SinkRoutesOptions } from './node-sink.ts'
export { DestinationError } from './errors.ts'
