import { API_KEY_PREFIX } from './ids.ts'

const KEY_SHAPED = new RegExp(`${API_KEY_PREFIX}[A-Za-z0-9]+`, 'g')
const SECRET_PARAM = /key|token|secret|auth|pass/i

const decoded = (text: string): string => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/**
 * A request URL fit for a log line: API-key-shaped text masked wherever it is, and the values
 * of secret-looking query parameters masked. note: keys are never accepted in the query
 * string, but a client that tries it must not get its key written to the log either.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?')
  const query =
    q === -1
      ? ''
      : `?${url
          .slice(q + 1)
          .split('&')
          .map((pair) => {
            const eq = pair.indexOf('=')
            return eq !== -1 && SECRET_PARAM.test(decoded(pair.slice(0, eq)))
              ? `${pair.slice(0, eq)}=[redacted]`
              : pair
          })
          .join('&')}`
  return `${q === -1 ? url : url.slice(0, q)}${query}`.replace(
    KEY_SHAPED,
    `${API_KEY_PREFIX}[redacted]`,
  )
}
