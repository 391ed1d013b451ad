// `node --import ./scripts/depcruise/register.mjs …dependency-cruise.mjs`: dependency-cruiser
// reads TypeScript sources through the compiler's JavaScript API, which TypeScript 7 (the
// native compiler this project type-checks with) does not offer yet. For dependency-cruiser
// alone, `typescript` resolves to ./typescript/, which strips types as Node does when it runs
// our sources (they use erasable syntax only), so what is checked is what runs.
import { registerHooks } from 'node:module'

const shim = new URL('./typescript/', import.meta.url)

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (context.parentURL?.includes('/dependency-cruiser/')) {
      if (specifier === 'typescript')
        return { url: new URL('index.cjs', shim).href, format: 'commonjs', shortCircuit: true }
      if (specifier === 'typescript/package.json')
        return { url: new URL('package.json', shim).href, format: 'json', shortCircuit: true }
    }
    return nextResolve(specifier, context)
  },
})

// note: stripTypeScriptTypes is experimental in Node 24; its warning says nothing to a reader
const emit = process.emitWarning
process.emitWarning = (warning, ...rest) => {
  if (String(warning).includes('stripTypeScriptTypes')) return
  emit.call(process, warning, ...rest)
}
