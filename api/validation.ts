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
  return ({ schema }) => {
    if (typeof schema.$id === 'string') {
      const stored = ajv.getSchema(schema.$id)
      if (stored) return stored
    }
    return ajv.compile(schema)
  }
}

/** Fastify `schemaController.compilersFactory.buildValidator`. */
export function buildValidator (externalSchemas: Record<string, unknown>): (route: Route) => unknown {
  const text = compiler(externalSchemas, { coerceTypes: 'array' })
  const json = compiler(externalSchemas, { coerceTypes: false })
  return (route) => route.httpPart === 'body' ? json(route) : text(route)
}
