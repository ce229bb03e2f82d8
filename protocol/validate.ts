// One ajv instance for every protocol schema, compiled once per schema and reused.
import { Ajv, type ValidateFunction, type ErrorObject } from 'ajv'
import addFormatsModule from 'ajv-formats'
import type { TSchema, Static } from '@sinclair/typebox'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv
export const ajv = addFormats(new Ajv({ allErrors: false, strict: false, coerceTypes: false, useDefaults: false }))

const compiled = new WeakMap<TSchema, ValidateFunction>()

export function validator<S extends TSchema> (schema: S): (value: unknown) => value is Static<S> {
  let fn = compiled.get(schema)
  if (fn === undefined) {
    fn = ajv.compile(schema)
    compiled.set(schema, fn)
  }
  const check = fn
  const guard = (value: unknown): value is Static<S> => check(value) as boolean
  Object.defineProperty(guard, 'errors', { get: () => check.errors })
  return guard
}

export function describeErrors (errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return 'invalid'
  return errors.map(e => `${e.instancePath || '/'} ${e.message ?? 'invalid'}`).join('; ')
}

/** Validates and returns the value typed, or throws a TypeError naming the first failure. */
export function assertValid<S extends TSchema> (schema: S, value: unknown, what = 'value'): Static<S> {
  const check = validator(schema)
  if (!check(value)) throw new TypeError(`${what}: ${describeErrors((check as unknown as { errors: ErrorObject[] }).errors)}`)
  return value
}
