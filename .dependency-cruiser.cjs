// The boundaries of src/, app/ and packages/ (docs/architecture.md#module-boundaries),
// checked by `npm run lint`. Layers point one way: http (routes, plugins, web) and cli ->
// services -> repositories -> db; src/lib/ depends on nothing of ours. A module owns its
// tables: others call its service. The app and the client library take types from the
// server's schemas, never its code.

// The plain data the app shares with the server's pages: no types to strip, no imports.
const SHARED_WITH_APP =
  '^src/((web/palette|web/app-paths|modules/keys/scopes|lib/html|i18n/languages)\\.ts|i18n/locales/[a-z-]+\\.json)$'

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-reach-into-repository',
      comment: "A module's repository is its own: another module calls its service instead.",
      severity: 'error',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '\\.repository\\.ts$', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'no-repository-outside-modules',
      comment: 'The HTTP layer, the CLI and src/lib/ reach data through services only.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/modules/' },
      to: { path: '\\.repository\\.ts$' },
    },
    {
      name: 'no-routes-from-routes',
      comment:
        'A routes file registers its own routes; shared pieces live in a service or src/lib/.',
      severity: 'error',
      from: { path: '\\.routes\\.ts$' },
      to: { path: '\\.routes\\.ts$' },
    },
    {
      name: 'no-reach-into-routes',
      comment:
        "Routes are registered by plugins (a module's *.plugin.ts, web/web.plugin.ts); nothing else imports a routes file.",
      severity: 'error',
      from: { pathNot: ['^src/app\\.ts$', '\\.routes\\.ts$', '\\.plugin\\.ts$'] },
      to: { path: '\\.routes\\.ts$' },
    },
    {
      name: 'no-folder-cycles',
      comment: 'Folders depend on each other one way (a module on another, never back).',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(src|app|packages)/' },
      to: { circular: true },
    },
    {
      name: 'no-module-cycles',
      comment: 'Files depend on each other one way too.',
      severity: 'error',
      from: { path: '^(src|app|packages)/' },
      to: { circular: true },
    },
    {
      name: 'lib-depends-on-nothing-of-ours',
      comment: 'src/lib/ is generic machinery: it imports only other lib files and packages.',
      severity: 'error',
      from: { path: '^src/lib/' },
      to: { path: '^src/', pathNot: '^src/lib/' },
    },
    {
      name: 'db-imports-nothing-above-it',
      comment: 'src/db/ is the bottom layer (besides lib): no modules, plugins, web or CLI.',
      severity: 'error',
      from: { path: '^src/db/' },
      to: { path: '^src/(modules|plugins|web|cli)/|^src/(app|server)\\.ts$' },
    },
    {
      name: 'modules-import-no-http-or-cli',
      comment:
        'Services and repositories are used by the HTTP layer and the CLI, never the reverse.',
      severity: 'error',
      from: { path: '^src/modules/' },
      to: { path: '^src/(plugins|web|cli)/|^src/(app|server)\\.ts$' },
    },
    {
      name: 'routes-call-services',
      comment:
        "A route translates HTTP to a service call; its own module's rows are the service's.",
      severity: 'error',
      from: { path: '\\.routes\\.ts$' },
      to: { path: '\\.repository\\.ts$' },
    },
    {
      name: 'repositories-import-no-services',
      comment: 'A repository reads and writes rows; the rules that use them sit above it.',
      severity: 'error',
      from: { path: '\\.repository\\.ts$' },
      to: { path: '\\.(service|routes)\\.ts$' },
    },
    {
      name: 'app-takes-types-from-server',
      comment:
        "The app (app/) takes only types from the server's code (its schemas and services), " +
        'besides the plain data and functions it shares with the server pages (palette, paths, scopes, HTML escaping, languages and their catalogs).',
      severity: 'error',
      from: { path: '^app/' },
      to: {
        path: '^src/',
        pathNot: SHARED_WITH_APP,
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'shared-with-app-imports-nothing',
      comment: 'What the app shares with the server is plain data: it brings no server code along.',
      severity: 'error',
      from: { path: SHARED_WITH_APP },
      to: { dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'client-imports-nothing-from-src',
      comment:
        '@statusd/client (packages/client/src/) runs without the server: only types from its schemas.',
      severity: 'error',
      from: { path: '^packages/client/src/' },
      to: { path: '^src/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'client-has-no-runtime-dependencies',
      comment: '@statusd/client has no runtime dependencies: packages only for their types.',
      severity: 'error',
      from: { path: '^packages/client/src/' },
      to: {
        dependencyTypes: [
          'npm',
          'npm-dev',
          'npm-optional',
          'npm-peer',
          'npm-no-pkg',
          'npm-unknown',
        ],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'server-imports-no-app-or-packages',
      comment:
        'The server does not import the app or a package from its sources; the CLI takes the client library through src/cli/statusd-client.ts alone.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/statusd-client\\.ts$' },
      to: { path: '^(app|packages)/' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'An import that resolves to nothing is a typo or a missing package.',
      severity: 'error',
      from: {},
      // the embed's texts, a module its build makes (scripts/build-app.ts)
      to: { couldNotResolve: true, pathNot: '^statusd:embed-texts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // built and generated files: the sources they come from are checked
    exclude: { path: '(^|/)(dist|generated)/' },
    // TypeScript's own parser (TypeScript 5: scripts/depcruise/register.mjs), before type
    // stripping: a type from another module's repository is a reach-in too
    parser: 'tsc',
    tsPreCompilationDeps: true,
    moduleSystems: ['es6'],
    // packages are resolved through their `exports` as Node resolves them (typebox, kysely/…)
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
}
