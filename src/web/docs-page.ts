import { html, type SafeHtml } from '../lib/html.ts'

// The API reference page (`GET /docs`, docs/api.md#api-reference-page): the service's own
// OpenAPI document rendered once on the server to plain HTML, no script at all
// (docs/decisions/0015-api-reference-as-plain-html.md). Each operation is a <details> (closed
// until opened, so the page is short and light), with its parameters, body and example, its
// answers, and a curl line to try it; the schemas follow, open, so that a link to one lands
// on it. Every text from the document is escaped.

/** The parts of an OpenAPI 3.1 document this page reads. */
interface Schema {
  $ref?: string
  type?: string | string[]
  format?: string
  enum?: unknown[]
  const?: unknown
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  properties?: Record<string, Schema>
  required?: string[]
  description?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  maximum?: number
  minItems?: number
  maxItems?: number
  examples?: unknown[]
  example?: unknown
}
interface Parameter {
  $ref?: string
  name: string
  in: string
  required?: boolean
  description?: string
  schema?: Schema
}
interface Media {
  schema?: Schema
  example?: unknown
}
interface Operation {
  operationId?: string
  summary?: string
  description?: string
  tags?: string[]
  parameters?: Parameter[]
  requestBody?: { description?: string; required?: boolean; content: Record<string, Media> }
  responses?: Record<string, { description?: string; content?: Record<string, Media> }>
  security?: Record<string, string[]>[]
}
export interface OpenApiDocument {
  info: { title: string; version: string; description?: string }
  tags?: { name: string; description?: string }[]
  paths: Record<string, Record<string, Operation>>
  components?: {
    schemas?: Record<string, Schema>
    parameters?: Record<string, Parameter>
  }
}

export interface DocsAssets {
  css: string
  icon: string
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'] as const

/** The last segment of a `$ref` (`#/components/schemas/Status` → `Status`). */
const refName = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1)

/** Text with `code` spans, as the document's descriptions write them. */
function prose(text: string | undefined): SafeHtml {
  if (!text) return html``
  return html`${text.split('`').map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`
}

/** A schema's type in words: `string`, `Status`, `array of PaletteEntry`, `"a" | "b"`. */
function typeOf(schema: Schema | undefined): SafeHtml {
  if (!schema) return html`any`
  if (schema.$ref) {
    const name = refName(schema.$ref)
    return html`<a href="#schema-${name}">${name}</a>`
  }
  if (schema.enum)
    return html`${schema.enum.map((v, i) => html`${i > 0 ? ' | ' : ''}<code>${JSON.stringify(v)}</code>`)}`
  if (schema.const !== undefined) return html`<code>${JSON.stringify(schema.const)}</code>`
  const union = schema.anyOf ?? schema.oneOf
  if (union) return html`${union.map((s, i) => html`${i > 0 ? ' or ' : ''}${typeOf(s)}`)}`
  if (schema.allOf)
    return html`${schema.allOf.map((s, i) => html`${i > 0 ? ' and ' : ''}${typeOf(s)}`)}`
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : []
  if (types.includes('array')) return html`array of ${typeOf(schema.items)}`
  if (types.length === 0) return html`any`
  return html`${types.join(' or ')}${schema.format ? ` (${schema.format})` : ''}`
}

/** Limits worth saying: lengths, bounds, sizes. */
function limits(schema: Schema | undefined): string {
  if (!schema) return ''
  const out: string[] = []
  const range = (min: number | undefined, max: number | undefined, unit: string) => {
    if (min !== undefined && max !== undefined) out.push(`${min}–${max}${unit}`)
    else if (min !== undefined) out.push(`at least ${min}${unit}`)
    else if (max !== undefined) out.push(`at most ${max}${unit}`)
  }
  range(schema.minLength, schema.maxLength, ' characters')
  range(schema.minimum, schema.maximum, '')
  range(schema.minItems, schema.maxItems, ' items')
  return out.join(', ')
}

export function renderDocsPage(doc: OpenApiDocument, assets: DocsAssets): string {
  const schemas = doc.components?.schemas ?? {}
  const sharedParameters = doc.components?.parameters ?? {}
  const resolveParameter = (p: Parameter): Parameter =>
    p.$ref ? (sharedParameters[refName(p.$ref)] ?? p) : p
  const resolve = (s: Schema | undefined): Schema | undefined =>
    s?.$ref ? schemas[refName(s.$ref)] : s
  /** The example a body starts from: the schema's own, never one made up. */
  const exampleOf = (media: Media): unknown => {
    if (media.example !== undefined) return media.example
    const schema = resolve(media.schema)
    return schema?.examples?.[0] ?? schema?.example
  }

  const operations = new Map<string, { method: string; path: string; op: Operation }[]>()
  for (const [path, item] of Object.entries(doc.paths))
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      const tag = op.tags?.[0] ?? 'other'
      operations.set(tag, [...(operations.get(tag) ?? []), { method, path, op }])
    }
  const tags = [
    ...(doc.tags ?? []),
    ...[...operations.keys()]
      .filter((name) => !doc.tags?.some((t) => t.name === name))
      .map((name) => ({ name, description: undefined })),
  ].filter((t) => operations.has(t.name))
  const tagId = (name: string) => `tag-${name.replace(/[^a-z0-9]+/gi, '-')}`

  const curl = (method: string, path: string, op: Operation): string => {
    const parts = [`curl -s${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} "$BASE${path}"`]
    if (op.security && op.security.length > 0) parts.push(`-H "service-api-key: $KEY"`)
    const [type, media] = Object.entries(op.requestBody?.content ?? {})[0] ?? []
    if (type && media) {
      const example = exampleOf(media)
      const body =
        example === undefined ? '' : typeof example === 'string' ? example : JSON.stringify(example)
      parts.push(`-H 'content-type: ${type}'`, `-d '${body.replaceAll("'", "'\\''")}'`)
    }
    return parts.join(' \\\n  ')
  }

  const parameterList = (parameters: Parameter[]) =>
    html`<h4>Parameters</h4>
<ul class="fields">${parameters.map((raw) => {
      const p = resolveParameter(raw)
      const limit = limits(p.schema)
      return html`<li><code>${p.name}</code> <span class="where">${p.in}${p.required ? ', required' : ''}</span> ${typeOf(p.schema)}${limit ? html` <span class="where">(${limit})</span>` : ''}${p.description ? html`<br>${prose(p.description)}` : ''}</li>`
    })}</ul>`

  const requestBody = (body: NonNullable<Operation['requestBody']>) =>
    html`<h4>Body</h4>
${body.description ? html`<p>${prose(body.description)}</p>` : ''}
${Object.entries(body.content).map(([type, media]) => {
  const example = exampleOf(media)
  return html`<p><code>${type}</code>: ${typeOf(media.schema)}</p>
${example === undefined ? '' : html`<pre>${typeof example === 'string' ? example : JSON.stringify(example, null, 2)}</pre>`}`
})}`

  const responses = (list: NonNullable<Operation['responses']>) =>
    html`<h4>Answers</h4>
<ul class="fields">${Object.entries(list).map(
      ([code, r]) =>
        html`<li><code>${code}</code> ${prose(r.description)}${(() => {
          const schema = Object.values(r.content ?? {})[0]?.schema
          return schema ? html` <span class="where">(${typeOf(schema)})</span>` : ''
        })()}</li>`,
    )}</ul>`

  const operation = ({ method, path, op }: { method: string; path: string; op: Operation }) => {
    const id = op.operationId ?? `${method}-${path}`
    return html`<details class="op" id="${id}">
<summary><span class="method m-${method}">${method.toUpperCase()}</span> <code class="path">${path}</code> <span class="summary">${op.summary ?? ''}</span></summary>
<div class="op-body">
${op.description ? html`<p>${prose(op.description)}</p>` : ''}
<p class="where">${prose(op.security && op.security.length > 0 ? 'Needs an API key (`service-api-key` or `Authorization: Bearer`), or the session cookie.' : 'No key needed.')}</p>
${op.parameters?.length ? parameterList(op.parameters) : ''}
${op.requestBody ? requestBody(op.requestBody) : ''}
${op.responses ? responses(op.responses) : ''}
<h4>Try it</h4>
<pre>${curl(method, path, op)}</pre>
</div>
</details>`
  }

  const schemaSection = (name: string, schema: Schema) => {
    const required = new Set(schema.required ?? [])
    const example = schema.examples?.[0] ?? schema.example
    return html`<section class="schema" id="schema-${name}" aria-labelledby="schema-${name}-name">
<h3 id="schema-${name}-name"><code>${name}</code></h3>
${schema.description ? html`<p>${prose(schema.description)}</p>` : ''}
<div>
<p>${typeOf(schema.properties ? { type: 'object' } : schema)}</p>
${
  schema.properties
    ? html`<ul class="fields">${Object.entries(schema.properties).map(([prop, s]) => {
        const limit = limits(s)
        return html`<li><code>${prop}</code> ${typeOf(s)}${required.has(prop) ? html` <span class="where">required</span>` : ''}${limit ? html` <span class="where">(${limit})</span>` : ''}${s.description ? html`<br>${prose(s.description)}` : ''}</li>`
      })}</ul>`
    : ''
}
${example === undefined ? '' : html`<h4>Example</h4><pre>${JSON.stringify(example, null, 2)}</pre>`}
</div>
</section>`
  }

  const count = [...operations.values()].reduce((n, list) => n + list.length, 0)
  const title = `${doc.info.title} API reference`
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="description" content="${`The HTTP API of ${doc.info.title} ${doc.info.version}: ${count} operations, each with its parameters, body, answers and a curl line to try it.`}">
<title>${title}</title>
<link rel="icon" href="${assets.icon}" type="image/svg+xml">
<link rel="stylesheet" href="${assets.css}">
</head>
<body>
<header class="top"><h1><a href="/"><img src="${assets.icon}" alt="" width="28" height="28"> ${title}</a></h1></header>
<main id="main">
<p>${prose(doc.info.description)}</p>
<p class="where">Version ${doc.info.version} · the OpenAPI document: <a href="/docs/json">JSON</a>, <a href="/docs/yaml">YAML</a> (for client generators and API tools). In the curl lines, <code>$BASE</code> is this server's address and <code>$KEY</code> an API key.</p>
<nav aria-label="Sections"><ul class="toc">${tags.map(
    (t) =>
      html`<li><a href="#${tagId(t.name)}">${t.name}</a> <span class="where">(${operations.get(t.name)?.length ?? 0})</span></li>`,
  )}<li><a href="#schemas">schemas</a> <span class="where">(${Object.keys(schemas).length})</span></li></ul></nav>
${tags.map(
  (t) => html`<section aria-labelledby="${tagId(t.name)}">
<h2 id="${tagId(t.name)}">${t.name}</h2>
${t.description ? html`<p>${prose(t.description)}</p>` : ''}
${(operations.get(t.name) ?? []).map(operation)}
</section>`,
)}
<section aria-labelledby="schemas">
<h2 id="schemas">schemas</h2>
<p>The objects the operations take and answer.</p>
${Object.entries(schemas).map(([name, schema]) => schemaSection(name, schema))}
</section>
</main>
</body>
</html>
`.value
}
