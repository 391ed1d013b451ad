import type { ComponentType } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { t } from './i18n.ts'

// Screens with heavy parts (the chart, the QR code) load on first use, so the first load
// stays small (docs/app.md#how-it-is-built): esbuild splits each dynamic import into a chunk.

export function lazy<P extends object>(load: () => Promise<{ default: ComponentType<P> }>) {
  let loaded: ComponentType<P> | null = null
  return function Lazy(props: P) {
    const [Component, setComponent] = useState<ComponentType<P> | null>(() => loaded)
    const [failed, setFailed] = useState(false)
    useEffect(() => {
      if (Component) return
      load().then(
        (module) => {
          loaded = module.default
          setComponent(() => module.default)
        },
        () => setFailed(true),
      )
    }, [Component])
    if (failed)
      return (
        <p class="form-error" role="alert">
          {t('app.lazy.failed')}
        </p>
      )
    if (!Component)
      return (
        <p class="loading" aria-live="polite">
          {t('app.lazy.loading')}
        </p>
      )
    return <Component {...props} />
  }
}
