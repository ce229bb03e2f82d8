export { latencyChannel } from './latency.ts'
export { lossChannel, dropChannel } from './loss.ts'
export { partitionChannel, cut, type PartitionWindow } from './partition.ts'
