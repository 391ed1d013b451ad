import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { UsageError } from './output.ts'

/** Where the client command talks to, and with which key (docs/cli.md#the-config-file). */
export interface ClientSettings {
  url: string
  apiKey?: string
}

/**
 * The config file: `$XDG_CONFIG_HOME/statusd/config.json`, or `~/.config/statusd/config.json`.
 * A relative XDG_CONFIG_HOME is ignored, as the XDG base directory spec says.
 */
export function configFile(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CONFIG_HOME
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.config')
  return path.join(base, 'statusd', 'config.json')
}

/** The server's base URL as given, checked: http(s) only, no trailing slash. */
export function baseUrl(text: string, from: string): string {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    throw new UsageError(`${from} must be a URL such as https://status.example.com, got "${text}"`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${from} must be an http or https URL, got "${text}"`)
  if (url.search || url.hash) throw new UsageError(`${from} must have no query or fragment`)
  return url.href.replace(/\/+$/, '')
}

/**
 * What the client uses: the config file's URL and key, each overridden by `STATUSD_URL` and
 * `STATUSD_API_KEY`. Undefined when there is no URL at all.
 */
export function readSettings(env: NodeJS.ProcessEnv): ClientSettings | undefined {
  const file = configFile(env)
  let saved: Partial<ClientSettings> = {}
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(file, 'utf8'))
    if (parsed !== null && typeof parsed === 'object') saved = parsed as Partial<ClientSettings>
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      throw new UsageError(
        `cannot read ${file}: ${(error as Error).message} (run statusd login again)`,
      )
  }
  const url = env.STATUSD_URL || saved.url
  const apiKey = env.STATUSD_API_KEY || saved.apiKey
  if (!url) return undefined
  return {
    url: baseUrl(url, env.STATUSD_URL ? 'STATUSD_URL' : `the url in ${file}`),
    ...(typeof apiKey === 'string' && apiKey !== '' && { apiKey }),
  }
}

/**
 * Saves the URL and key for the user alone: the directory 0700, the file 0600 from its first
 * byte (written beside it and renamed over the old one, whose mode does not carry over).
 */
export function saveSettings(env: NodeJS.ProcessEnv, settings: Required<ClientSettings>): string {
  const file = configFile(env)
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const temp = `${file}.${process.pid}.tmp`
  try {
    fs.writeFileSync(temp, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600, flag: 'wx' })
    fs.renameSync(temp, file)
  } catch (error) {
    fs.rmSync(temp, { force: true })
    throw error
  }
  return file
}
