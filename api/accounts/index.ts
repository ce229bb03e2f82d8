export * from './model.ts'
export { AccountsService, DEFAULT_PRICING, type Pricing, type PriceName, type AccountsOptions, type AuthResult } from './service.ts'
export { generateKey, hashKey, keyIdOf, KEY_PREFIX, KEY_SECRET_BYTES } from './keys.ts'
export { bootstrapDevnetKeys, DEVNET_CREDITS, type DevnetKeys } from './devnet.ts'
