// `node --import ./scripts/depcruise/register.mjs …dependency-cruise.mjs`: dependency-cruiser
// reads TypeScript through the compiler's JavaScript API, which TypeScript 7 (the native
// compiler this project type-checks with) does not offer yet. For dependency-cruiser alone,
// `typescript` resolves to TypeScript 5 (the `typescript-5` devDependency), whose parser also
// tells type-only imports from the others and reads the app's TSX.
import { registerHooks } from 'node:module'

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (
      context.parentURL?.includes('/dependency-cruiser/') &&
      (specifier === 'typescript' || specifier.startsWith('typescript/'))
    )
      return nextResolve(specifier.replace(/^typescript/, 'typescript-5'), context)
    return nextResolve(specifier, context)
  },
})
