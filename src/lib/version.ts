// statusd's version: the one in package.json (semver), printed by `statusd --version` and
// answered by /healthz (docs/operations.md#health-checks).
import pkg from '../../package.json' with { type: 'json' }

export const VERSION: string = pkg.version
