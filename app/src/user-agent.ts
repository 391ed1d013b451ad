import { t } from './i18n.ts'

// "Chrome on Linux" from a user agent, in the language shown: enough for a person to
// recognise their own browsers (the sessions list, the name of a browser's push channel).
// Not for deciding anything.

export function browserName(userAgent: string): string {
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : null
  const os = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X/.test(userAgent)
          ? 'macOS'
          : /Linux/.test(userAgent)
            ? 'Linux'
            : null
  if (browser && os) return t('app.userAgent.browserOn', { browser, os })
  return browser ?? os ?? (userAgent.slice(0, 60) || t('app.userAgent.unknown'))
}
