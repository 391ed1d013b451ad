// What dependency-cruiser calls of TypeScript's API, on Node's own type stripping (see
// ../register.mjs for why). Only `transpileModule` is used: with `tsPreCompilationDeps` off
// and the acorn parser, dependency-cruiser transpiles each file to JavaScript, then parses that.
const { stripTypeScriptTypes } = require('node:module')

/**
 * Type-only imports and exports made plain, so that stripping keeps them: a type taken from
 * another module's repository is a reach-in all the same.
 */
function keepTypeImports(source) {
  return source
    .replace(/^(\s*)import\s+type\s+/gm, '$1import ')
    .replace(/^(\s*)export\s+type\s+(?=[{*])/gm, '$1export ')
    .replace(/\b(import|export)(\s+[\w$]+\s*,)?\s*\{[^}]*\}/g, (clause) =>
      clause.replace(/([{,]\s*)type\s+(?=[\w$])/g, '$1'),
    )
}

module.exports = {
  version: '5.0.0-node-strip-types',
  // read when dependency-cruiser's own TypeScript parser loads; that parser is never used
  SyntaxKind: {},
  /** TypeScript's `transpileModule`, as far as dependency-cruiser needs it. */
  transpileModule(source) {
    return { outputText: stripTypeScriptTypes(keepTypeImports(source), { mode: 'strip' }) }
  },
}
