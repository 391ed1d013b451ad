import { useEffect, useState } from 'preact/hooks'
import { api, apiPage, apiPath } from '../api.ts'
import { FormError } from '../components/form.tsx'
import { Rich } from '../components/rich.tsx'
import { t } from '../i18n.ts'
import { loadMyStatuses, type Relation } from '../my-statuses.ts'
import { Link } from '../router.tsx'
import type { SearchResult } from '../types.ts'

// Finding a status to follow (docs/app.md#finding-a-status-to-follow): the listed public
// statuses whose name holds every word typed (GET /v1/search/statuses, docs/accounts.md#discovery),
// each with a Follow button (POST /v1/status/:id/subscription). A status already mine says
// how it is mine instead, so a person never follows their own.

const MINE_LABEL: Record<Relation, () => string> = {
  owned: () => t('app.find.mine.owned'),
  shared: () => t('app.find.mine.shared'),
  followed: () => t('app.find.mine.followed'),
}

export default function Find() {
  const [query, setQuery] = useState('')
  const [results, setResults] = useState<SearchResult[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const [searched, setSearched] = useState('')
  const [mine, setMine] = useState<Map<string, Relation>>(new Map())
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    const controller = new AbortController()
    loadMyStatuses(controller.signal).then(
      (list) => setMine(new Map(list.map((s) => [s.statusId, s.relation]))),
      () => {},
    )
    return () => controller.abort()
  }, [])

  async function search(path: string, more: boolean) {
    setBusy(true)
    setError(null)
    try {
      const page = await apiPage<SearchResult>(path)
      setResults((before) => (more && before ? [...before, ...page.items] : page.items))
      setNext(page.next)
    } catch (e) {
      setError(e)
    } finally {
      setBusy(false)
    }
  }

  async function follow(result: SearchResult) {
    setError(null)
    try {
      await api('POST', apiPath`/v1/status/${result.statusId}/subscription`)
      setMine((before) =>
        new Map(before).set(result.statusId, before.get(result.statusId) ?? 'followed'),
      )
    } catch (e) {
      setError(e)
    }
  }

  return (
    <>
      <h1>{t('app.find.title')}</h1>
      <p class="muted">{t('app.find.intro')}</p>
      <form
        class="find-form"
        onSubmit={(event) => {
          event.preventDefault()
          const words = query.trim()
          if (!words) return
          setSearched(words)
          void search(`/v1/search/statuses?q=${encodeURIComponent(words)}`, false)
        }}
      >
        <div class="field">
          <label for="find-words">{t('app.find.words')}</label>
          <input
            id="find-words"
            type="search"
            required
            value={query}
            onInput={(event) => setQuery(event.currentTarget.value)}
          />
        </div>
        <button type="submit" class="button primary" disabled={busy}>
          {t('app.find.search')}
        </button>
      </form>
      <FormError error={error} />
      <p class="muted" aria-live="polite">
        {results &&
          (results.length === 0
            ? t('app.find.noneFound', { words: searched })
            : next
              ? t('app.find.foundMore', { count: results.length, words: searched })
              : t('app.find.found', { count: results.length, words: searched }))}
      </p>
      {results && results.length > 0 && (
        <ul class="item-list find-results">
          {results.map((result) => {
            const relation = mine.get(result.statusId)
            return (
              <li key={result.statusId} class="item">
                <span>
                  <strong class="user-text">{result.name}</strong>{' '}
                  <span class="user-text">{result.value ?? t('app.find.noValue')}</span>
                  <span class="muted">
                    {' '}
                    ·{' '}
                    <Rich
                      text={t('app.find.by')}
                      parts={{ owner: () => <span class="user-text">{result.ownerName}</span> }}
                    />
                  </span>
                </span>
                <span class="actions">
                  {relation ? (
                    <Link href={`/statuses/${encodeURIComponent(result.statusId)}`}>
                      {MINE_LABEL[relation]()}
                    </Link>
                  ) : (
                    <button
                      type="button"
                      class="button primary"
                      aria-label={t('app.find.followLabel', { name: result.name })}
                      onClick={() => follow(result)}
                    >
                      {t('app.find.follow')}
                    </button>
                  )}
                </span>
              </li>
            )
          })}
        </ul>
      )}
      {next && (
        <button type="button" class="button" disabled={busy} onClick={() => search(next, true)}>
          {t('app.find.more')}
        </button>
      )}
    </>
  )
}
