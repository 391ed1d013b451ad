// Two builds of statusd, alternated on one public read (bench/read-targets.ts): this checkout
// and another one (`--against DIR`, a `git worktree add` of an older commit with its
// node_modules). Per run: a fresh copy of a small dataset, `statusd serve` as users run it
// (each build's own flags, LOG_LEVEL warn as the rig, or --log-level), the anonymous limit
// lifted as in the rig, a 2 s warm-up, then wrk -t1 -c32 over the views of the public
// statuses. Prints one JSON line per run: req/s and the server's CPU time per answered
// request, the figure to trust on a loaded host (pairs run seconds apart).
//   node bench/read-versus.ts --against ../statusd-before [--target badge] [--rounds 3]
//                             [--duration 8] [--log-level warn]
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { publicReadTargets, READ_TARGETS } from './read-targets.ts'
import {
  assertWrkInstalled,
  cpuMicros,
  ROOT,
  runWrk,
  startServer,
  statusdCommand,
  stopServer,
  takePort,
} from './rig.ts'
import { seed } from './seed.ts'

const { values } = parseArgs({
  options: {
    against: { type: 'string' },
    target: { type: 'string', default: 'badge' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '8' },
    'log-level': { type: 'string', default: 'warn' },
  },
})
if (!values.against) throw new Error('bench: --against DIR (the other checkout) is required')
const target = READ_TARGETS.find((t) => t.name === values.target)
if (!target) throw new Error(`bench: no read target ${values.target}`)
assertWrkInstalled()

const dir = mkdtempSync(join(tmpdir(), 'statusd-read-versus-'))
try {
  const data = await seed({ dir, statuses: 1000, history: 1 })
  const builds = [
    { build: 'this checkout', root: ROOT },
    { build: 'against', root: resolve(values.against) },
  ]
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const { build, root } of builds) {
      const dbFile = join(dir, `${round}-${build.replace(' ', '-')}.db`)
      copyFileSync(join(dir, 'seed.db'), dbFile)
      const port = takePort()
      const command = statusdCommand(port, `sqlite:${dbFile}`, root)
      command.env.LOG_LEVEL = values['log-level']
      // as in the rig: wrk's one address would meet the anonymous limit at once; its check still runs
      command.env.ANON_REQUESTS_PER_MINUTE = '1000000000'
      const child = await startServer(build, port, command)
      try {
        const file = await publicReadTargets(target, port, data, join(dir, 'targets.txt'))
        const wrk = { port, connections: 32, mode: 'public' as const, key: data.key, targets: file }
        runWrk({ ...wrk, seconds: 2 }) // warm-up: JIT, caches, connection setup
        const before = cpuMicros(child.pid as number)
        const r = runWrk({ ...wrk, seconds: Number(values.duration) })
        const cpuUs = (cpuMicros(child.pid as number) - before) / r.requests
        console.log(
          JSON.stringify({
            round,
            build,
            target: target.name,
            logLevel: values['log-level'],
            reqPerS: Math.round(r.rps),
            cpuUsPerRequest: Number(cpuUs.toFixed(1)),
            non2xx: r.non2xx,
          }),
        )
      } finally {
        await stopServer(child)
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
