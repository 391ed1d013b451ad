// Run by test/unit/type.test.ts in a child process: builds the app, prints its OpenAPI
// document (every route's validating schemas) and the TypeBox modules Node loaded meanwhile.
//   node test/helpers/openapi-child.ts [--typebox]
// With --typebox, src/lib/type.ts is swapped for TypeBox's own `Type` before anything loads,
// so the document is what TypeBox itself would have built from the same schema modules.
import module from 'node:module'

const typeboxModules: string[] = []
const swap = process.argv.includes('--typebox')
const shim = `data:text/javascript,${encodeURIComponent("export { Type } from 'typebox'")}`
module.registerHooks({
  resolve(specifier, context, next) {
    // note: the shim is a data: URL, which cannot resolve a package by itself
    const result = next(
      specifier,
      context.parentURL?.startsWith('data:') ? { ...context, parentURL: import.meta.url } : context,
    )
    // every import of src/lib/type.ts, whatever its specifier ('./type.ts', '../../lib/type.ts')
    if (swap && result.url.endsWith('/src/lib/type.ts')) return { url: shim, shortCircuit: true }
    if (result.url.includes('/node_modules/typebox/')) typeboxModules.push(result.url)
    return result
  },
})

const { makeApp } = await import('./app.ts')
const t = await makeApp()
const doc = (await t.request(null, 'GET', '/openapi.json')).json()
await t.close()
process.stdout.write(JSON.stringify({ doc, typeboxModules }))
