// The boundaries of src/ (docs/architecture.md#module-boundaries), checked by `npm run lint`.
// Layers point one way: http (routes, plugins, web) and cli -> services -> repositories -> db;
// src/lib/ depends on nothing of ours. A module owns its tables: others call its service.

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
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'no-module-cycles',
      comment: 'Files depend on each other one way too.',
      severity: 'error',
      from: { path: '^src/' },
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
      name: 'not-to-unresolvable',
      comment: 'An import that resolves to nothing is a typo or a missing package.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // note: TypeScript is read through scripts/depcruise/register.mjs (Node's type stripping),
    // which keeps type-only imports: a type from another module's repository is a reach-in too
    parser: 'acorn',
    tsPreCompilationDeps: false,
    moduleSystems: ['es6'],
    // packages are resolved through their `exports` as Node resolves them (typebox, kysely/…)
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
}
