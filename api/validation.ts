// Request validation: JSON bodies are validated as sent (no type coercion: `"10"` and `true` are not
// integers), while querystrings, path parameters and headers, which are text by nature, are coerced to
// their schema's types (`?limit=5` is an integer). Two Ajv instances with Fastify's defaults otherwise.
import { Ajv, type Options } from 'ajv'
import addFormatsModule from 'ajv-formats'

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv

const BASE: Options = { useDefaults: true, removeAdditional: false, addUsedSchema: false, allErrors: false, strict: false }

type Route = { schema: Record<string, unknown> & { $id?: string }, httpPart?: string }

function compiler (externalSchemas: Record<string, unknown>, options: Options): (route: Route) => unknown {
  const ajv = new Ajv({ ...BASE, ...options })
  addFormats(ajv)
  for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema as never)
  return ({ schema }) => lazyValidator(() => {
    if (typeof schema.$id === 'string') {
      const stored = ajv.getSchema(schema.$id)
      if (stored) return stored
    }
    return ajv.compile(schema)
  })
}

type AjvFunction = ((data: unknown, ctx?: never) => unknown) & { errors?: unknown, schemaEnv?: unknown }

/**
 * A route's validator, compiled on the route's first request rather than when the server starts: a node
 * serves a handful of its ~90 routes in most runs, and compiling every schema (and every response
 * serializer, `lazySerializers`) took ~0.4 s of CPU at each API start (docs/api.md#schemas-compiled-on-first-use).
 * Fastify passes the request as the parent (so Ajv may coerce a whole querystring) to a function with
 * `schemaEnv`, and reads `errors` after a failure: both are forwarded.
 */
export function lazyValidator (compile: () => AjvFunction): AjvFunction {
  const compiled = once(compile)
  let fn: AjvFunction | undefined
  const validate = ((data: unknown, ctx?: never) => (fn ??= compiled())(data, ctx)) as AjvFunction
  Object.defineProperty(validate, 'errors', { get: () => fn?.errors ?? null })
  Object.defineProperty(validate, 'schemaEnv', { get: () => (fn ??= compiled()).schemaEnv })
  return validate
}

/**
 * `build` run once: its result, or the same error on every later call. A schema that does not compile is
 * a defect of the route, not of the request: the error is an internal one (a 500 that shows no detail),
 * and it is not compiled again on each request.
 */
function once<T> (build: () => T): () => T {
  let failure: Error | undefined
  return () => {
    if (failure !== undefined) throw failure
    try {
      return build()
    } catch (err) {
      failure = Object.assign(new Error(`a route schema does not compile: ${(err as Error).message}`), { code: 'BWN_ERR_INTERNAL', statusCode: 500, cause: err })
      throw failure
    }
  }
}

/** Fastify `schemaController.compilersFactory.buildValidator`: each route's validator compiled on first use. */
export function buildValidator (externalSchemas: Record<string, unknown>): (route: Route) => unknown {
  const text = compiler(externalSchemas, { coerceTypes: 'array' })
  const json = compiler(externalSchemas, { coerceTypes: false })
  return (route) => route.httpPart === 'body' ? json(route) : text(route)
}

type Serializer = (data: unknown) => string
type SerializerFactory = (externalSchemas: unknown, options: unknown) => (route: unknown) => Serializer

/**
 * Fastify `schemaController.compilersFactory.buildSerializer`: Fastify's own (fast-json-stringify), each
 * route's response serializer built on the first response it writes (see `lazyValidator`).
 */
export function lazySerializers (base: SerializerFactory): SerializerFactory {
  return (externalSchemas, options) => {
    const build = base(externalSchemas, options)
    return (route) => {
      const built = once(() => build(route))
      let fn: Serializer | undefined
      return (data) => (fn ??= built())(data)
    }
  }
}
