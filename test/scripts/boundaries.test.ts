import assert from 'node:assert/strict'
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, it } from 'node:test'
import { tempDir } from '../helpers/cleanup.ts'
import { ROOT, runToEnd } from '../helpers/processes.ts'

// The module boundaries (docs/architecture.md#module-boundaries) are kept by
// dependency-cruiser in `npm run lint`. These run its configuration on small trees that each
// break one rule, so a rule that stops firing fails here, and on src/ itself.

const CONFIG = join(ROOT, '.dependency-cruiser.cjs')

/** Runs the boundary checker as `npm run lint` does, on src/, app/ and packages/ under `baseDir`. */
async function check(t: Parameters<typeof tempDir>[0], baseDir: string) {
  // note: beside the tree, never in it: src/ is checked in place
  const config = join(tempDir(t, 'statusd-depcruise-'), 'depcruise.cjs')
  writeFileSync(
    config,
    `module.exports = { extends: ${JSON.stringify(CONFIG)}, options: { baseDir: ${JSON.stringify(baseDir)} } }\n`,
  )
  const run = await runToEnd(
    t,
    process.execPath,
    [
      '--import',
      './scripts/depcruise/register.mjs',
      'node_modules/dependency-cruiser/bin/dependency-cruiser.mjs',
      '--config',
      config,
      'src',
      'app',
      'packages',
    ],
    process.env,
  )
  return { code: run.code, output: `${run.stdout}\n${run.stderr}` }
}

/** A tree of source files under a fresh folder: path → text; packages resolve as ours do. */
function tree(t: Parameters<typeof tempDir>[0], files: Record<string, string>): string {
  const root = tempDir(t, 'statusd-boundaries-')
  symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

/** Two modules that keep to the rules: b uses a's service. */
const CLEAN = {
  'src/modules/a/a.repository.ts': 'export const rowsOfA = (): string[] => []\n',
  'src/modules/a/a.service.ts':
    "import { rowsOfA } from './a.repository.ts'\nexport const listA = (): string[] => rowsOfA()\n",
  'src/modules/a/a.routes.ts':
    "import { listA } from './a.service.ts'\nexport const aRoutes = () => listA()\n",
  'src/modules/b/b.service.ts':
    "import { listA } from '../a/a.service.ts'\nexport const listB = (): string[] => listA()\n",
  'src/modules/b/b.routes.ts':
    "import { listB } from './b.service.ts'\nexport const bRoutes = () => listB()\n",
  'src/lib/text.ts': 'export const trim = (s: string): string => s.trim()\n',
  'src/db/database.ts': "import { trim } from '../lib/text.ts'\nexport const name = trim(' db ')\n",
  'src/app.ts':
    "import { aRoutes } from './modules/a/a.routes.ts'\nimport { bRoutes } from './modules/b/b.routes.ts'\nexport const app = [aRoutes, bRoutes]\n",
  'src/modules/a/a.schemas.ts': 'export const ASchema = { type: "object" }\n',
  'src/web/palette.ts': "export const PALETTE = ['blue']\n",
  // the app: types from the server's schemas, plain data from the palette
  'app/src/types.ts':
    "import type { ASchema } from '../../src/modules/a/a.schemas.ts'\nexport type A = typeof ASchema\n",
  'app/src/main.tsx':
    "import { PALETTE } from '../../src/web/palette.ts'\nimport type { A } from './types.ts'\nexport const main = (a: A) => <p>{PALETTE[0]}{String(a)}</p>\n",
  // the client library: types from the server's schemas only
  'packages/client/src/index.ts':
    "import type { ASchema } from '../../../src/modules/a/a.schemas.ts'\nexport type A = typeof ASchema\n",
}

const options = {
  // note: no database involved, so the PostgreSQL pass leaves this file out
  // (docs/architecture.md#tests)
  // each case is a process of its own, mostly waiting on the file system
  concurrency: true,
}

describe('module boundaries (dependency-cruiser in npm run lint)', options, () => {
  it('src/ keeps them', async (t) => {
    const { code, output } = await check(t, ROOT)
    assert.equal(code, 0, output)
    assert.match(output, /no dependency violations found/)
  })

  it('a tree that keeps them passes', async (t) => {
    const { code, output } = await check(t, tree(t, CLEAN))
    assert.equal(code, 0, output)
  })

  for (const { name, rule, files } of [
    {
      name: "a module's type-only import of another module's repository",
      rule: 'no-reach-into-repository',
      files: {
        'src/modules/b/b.reach.ts':
          "import type { rowsOfA } from '../a/a.repository.ts'\nexport type R = typeof rowsOfA\n",
      },
    },
    {
      name: 'the web pages reading a repository',
      rule: 'no-repository-outside-modules',
      files: {
        'src/web/page.ts':
          "import { rowsOfA } from '../modules/a/a.repository.ts'\nexport const page = rowsOfA\n",
      },
    },
    {
      name: 'a routes file importing another',
      rule: 'no-routes-from-routes',
      files: {
        'src/modules/b/b.routes.ts':
          "import { aRoutes } from '../a/a.routes.ts'\nexport const bRoutes = aRoutes\n",
      },
    },
    {
      name: 'a service importing a routes file',
      rule: 'no-reach-into-routes',
      files: {
        'src/modules/b/b.service.ts':
          "import { aRoutes } from '../a/a.routes.ts'\nexport const listB = (): string[] => []\nexport const r = aRoutes\n",
      },
    },
    {
      name: 'a routes file reading its own repository',
      rule: 'routes-call-services',
      files: {
        'src/modules/a/a.routes.ts':
          "import { rowsOfA } from './a.repository.ts'\nexport const aRoutes = () => rowsOfA()\n",
      },
    },
    {
      name: 'two modules that use each other',
      rule: 'no-folder-cycles',
      files: {
        'src/modules/a/a.rules.ts':
          "import { listB } from '../b/b.service.ts'\nexport const rule = listB\n",
      },
    },
    {
      name: 'src/lib importing a module',
      rule: 'lib-depends-on-nothing-of-ours',
      files: {
        'src/lib/text.ts':
          "import { listA } from '../modules/a/a.service.ts'\nexport const trim = (s: string): string => s.trim()\nexport const l = listA\n",
      },
    },
    {
      name: 'src/db importing a module',
      rule: 'db-imports-nothing-above-it',
      files: {
        'src/db/database.ts':
          "import { listA } from '../modules/a/a.service.ts'\nexport const name = listA\n",
      },
    },
    {
      name: 'the app importing a schema as a value',
      rule: 'app-takes-types-from-server',
      files: {
        'app/src/types.ts':
          "import { ASchema } from '../../src/modules/a/a.schemas.ts'\nexport const a = ASchema\n",
      },
    },
    {
      name: 'what the app shares bringing server code along',
      rule: 'shared-with-app-imports-nothing',
      files: {
        'src/web/palette.ts':
          "import { listA } from '../modules/a/a.service.ts'\nexport const PALETTE = listA()\n",
      },
    },
    {
      name: 'the client library importing a value from src/',
      rule: 'client-imports-nothing-from-src',
      files: {
        'packages/client/src/index.ts':
          "import { ASchema } from '../../../src/modules/a/a.schemas.ts'\nexport const a = ASchema\n",
      },
    },
    {
      name: 'the client library with a runtime dependency',
      rule: 'client-has-no-runtime-dependencies',
      files: {
        'packages/client/src/index.ts':
          "import { Type } from 'typebox'\nexport const s = Type.String()\n",
      },
    },
    {
      name: 'the server importing the app',
      rule: 'server-imports-no-app-or-packages',
      files: {
        'src/web/page.ts':
          "import { main } from '../../app/src/main.tsx'\nexport const page = main\n",
      },
    },
    {
      name: 'two files of the app that import each other',
      rule: 'no-module-cycles',
      files: {
        'app/src/types.ts':
          "import { main } from './main.tsx'\nexport type A = string\nexport const m = main\n",
      },
    },
  ])
    it(`fails on ${name} (${rule})`, async (t) => {
      const { code, output } = await check(t, tree(t, { ...CLEAN, ...files }))
      assert.notEqual(code, 0, output)
      assert.match(output, new RegExp(`error ${rule}:`), output)
    })
})
