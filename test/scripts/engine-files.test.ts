import assert from 'node:assert/strict'
import { globSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, it } from 'node:test'
import { pathToFileURL } from 'node:url'
import { ENGINE_MODULE, engineFiles } from '../../scripts/engine-files.ts'
import { tempDir } from '../helpers/cleanup.ts'
import { ROOT, runToEnd } from '../helpers/processes.ts'

// The PostgreSQL pass of `npm test` runs only the files whose result can depend on the
// engine: those that import test/helpers/engine.ts (docs/architecture.md#tests). These check
// the scan that finds them, the rule it rests on, and the check that catches what it misses.

/** A tree of files under a fresh folder: path → text. */
function tree(t: Parameters<typeof tempDir>[0], files: Record<string, string>): string {
  const root = tempDir(t, 'statusd-engine-files-')
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

describe('the PostgreSQL pass runs the files that import the engine module (docs/architecture.md#tests)', () => {
  it('finds a file that imports it directly, through helpers, in a cycle, by import() of a literal; not one that does not, nor one that imports types alone', (t) => {
    // note: the test files sit two folders down, so that no path written here leads, from
    // this file, to the real engine module (which would put this file in the PostgreSQL pass)
    const root = tree(t, {
      'test/helpers/engine.ts': "export const TEST_ENGINE = 'sqlite'\n",
      'test/helpers/app.ts':
        "import { TEST_ENGINE } from './engine.ts'\nexport const app = TEST_ENGINE\n",
      'test/helpers/world.ts': "export { app } from './app.ts'\n",
      'test/helpers/a.ts': "import { b } from './b.ts'\nexport const a = 1\n",
      'test/helpers/b.ts': "import { a } from './a.ts'\nimport './world.ts'\nexport const b = a\n",
      'test/helpers/pure.ts': "import { join } from 'node:path'\nexport const pure = join\n",
      'test/x/y/direct.test.ts': "import { TEST_ENGINE } from '../../helpers/engine.ts'\n",
      'test/x/y/helper.test.ts': "import { app } from '../../helpers/app.ts'\n",
      'test/x/y/re-export.test.ts': "import {\n  app,\n} from '../../helpers/world.ts'\n",
      'test/x/y/cycle.test.ts': "import { a } from '../../helpers/a.ts'\n",
      'test/x/y/dynamic.test.ts': "const { app } = await import('../../helpers/app.ts')\n",
      'test/x/y/pure.test.ts':
        "import { pure } from '../../helpers/pure.ts'\nimport '../../../src/db.ts'\n",
      'test/x/y/alone.test.ts': "import { it } from 'node:test'\n",
      // type imports are erased before a file runs: they load nothing
      'test/helpers/types.ts':
        "import type { app } from './app.ts'\nexport type App = typeof app\n",
      'test/x/y/types.test.ts':
        "import type {\n  app,\n} from '../../helpers/app.ts'\nimport '../../helpers/types.ts'\nexport type { App } from '../../helpers/types.ts'\n",
      'test/x/y/mixed.test.ts': "import { type app, app as value } from '../../helpers/app.ts'\n",
    })
    const files = globSync('test/x/y/*.test.ts', { cwd: root }).sort()
    assert.deepEqual(engineFiles(files, root), [
      'test/x/y/cycle.test.ts',
      'test/x/y/direct.test.ts',
      'test/x/y/dynamic.test.ts',
      'test/x/y/helper.test.ts',
      'test/x/y/mixed.test.ts',
      'test/x/y/re-export.test.ts',
    ])
  })

  it('test code learns the engine only from test/helpers/engine.ts: nothing else reads TEST_ENGINE or TEST_DATABASE_URL', () => {
    // a read of either variable anywhere else would make a file's result depend on the
    // engine without the scan seeing it
    const reads =
      /\benv\s*(?:\.\s*|\[\s*['"`])TEST_(?:ENGINE|DATABASE_URL)\b|\{[^}]*\bTEST_(?:ENGINE|DATABASE_URL)\b[^}]*\}\s*=\s*process\.env/
    const sources = globSync(
      ['test/**/*.ts', 'src/**/*.ts', 'bin/**/*.js', 'packages/*/src/**/*.ts'],
      {
        cwd: ROOT,
      },
    )
    assert.ok(sources.length > 100, 'the sources are found')
    const readers = sources.filter((f) => reads.test(readFileSync(join(ROOT, f), 'utf8'))).sort()
    assert.deepEqual(readers, [ENGINE_MODULE])
  })

  it('a test file that loads the engine module without the scan naming it fails, so the PostgreSQL pass cannot leave it out unseen', async (t) => {
    const dir = tempDir(t, 'statusd-engine-files-')
    const file = join(dir, 'hidden.test.ts')
    // a path the scan cannot follow: computed at run time
    const engine = pathToFileURL(join(ROOT, ENGINE_MODULE)).href
    writeFileSync(file, `await import([${JSON.stringify(engine)}][0])\n`)
    const listed = relative(ROOT, file).split('\\').join('/')

    const run = (named: string) =>
      runToEnd(t, process.execPath, [file], {
        ...process.env,
        TEST_ENGINE: 'sqlite',
        TEST_ENGINE_FILES: named,
      })
    const unnamed = await run('test/some/other.test.ts')
    assert.notEqual(unnamed.code, 0)
    assert.match(unnamed.stderr, /the PostgreSQL pass would leave it out/)
    const named = await run(`test/some/other.test.ts\n${listed}`)
    assert.equal(named.code, 0, named.stderr)
  })
})
