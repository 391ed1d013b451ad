// statusd share page: live updates over Server-Sent Events. Plain JavaScript, no build step;
// served as a file (CSP: script-src 'self'). Every text goes in through textContent.
;(() => {
  const body = document.body
  const byId = (id) => document.getElementById(id)
  // the page's words in its language (docs/languages.md), from the server: `data-texts`
  let texts = {}
  try {
    texts = JSON.parse(body.dataset.texts || '{}')
  } catch {}
  const say = (key) => (typeof texts[key] === 'string' ? texts[key] : '')
  // note: times in the page's language, as its sentences ("Geändert vor 5 Minuten"), in the
  // viewer's own time zone, and in the viewer's own region of that language (en-GB's dates)
  const pageLang = document.documentElement.lang || 'en'
  const lang =
    (navigator.languages || []).find((tag) => tag.split('-')[0] === pageLang.split('-')[0]) ||
    pageLang
  const when = new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' })
  const relative = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' })
  const UNITS = [
    ['year', 365 * 24 * 3600],
    ['month', 30 * 24 * 3600],
    ['week', 7 * 24 * 3600],
    ['day', 24 * 3600],
    ['hour', 3600],
    ['minute', 60],
  ]

  /** "just now", "5 minutes ago", "yesterday", "3 weeks ago": the largest whole unit elapsed. */
  const ago = (at) => {
    // a time ahead (an expiry): its date; a clock a little ahead of the viewer's is "just
    // now", never "in 2 minutes"
    if (at.getTime() - Date.now() > 60_000) return when.format(at)
    const seconds = Math.max(0, (Date.now() - at.getTime()) / 1000)
    for (const [unit, size] of UNITS)
      if (seconds >= size) return relative.format(-Math.floor(seconds / size), unit)
    // note: not Intl's "now" ("Changed now")
    return say('justNow')
  }

  /**
   * A <time>: the relative time as text, the absolute one (viewer's zone) as its title; one
   * marked `data-absolute` (the invitation's expiry) shows the date itself.
   */
  const localise = (el) => {
    const at = new Date(el.dateTime)
    if (Number.isNaN(at.getTime())) return
    el.textContent = 'absolute' in el.dataset ? when.format(at) : ago(at)
    el.title = when.format(at)
  }
  const localiseAll = () => {
    for (const el of document.querySelectorAll('time[datetime]')) localise(el)
  }
  localiseAll()
  // "5 minutes ago" becomes "6 minutes ago" without a change to the status
  setInterval(localiseAll, 60_000)

  const timeElement = (iso, absolute = false) => {
    const el = document.createElement('time')
    el.dateTime = iso
    if (absolute) el.dataset.absolute = ''
    el.textContent = iso
    localise(el)
    return el
  }
  /** A sentence of the page's with a <time> where its `{time}` is: "Changed 5 minutes ago". */
  const withTime = (key, el) => {
    const [before, after = ''] = say(key).split('{time}')
    return [before, el, after]
  }

  // The value on one line, as large as fits (docs/sharing.md#fitting-the-value): the
  // stylesheet's size is a safe guess for the value's length; here it grows or shrinks to
  // the box's width, measured. Never broken inside a word ("OCCUPIE/D").
  const fitValue = () => {
    const value = byId('value')
    if (!value) return
    const text = byId('value-text')
    // the largest size the stylesheet allows here, in pixels
    value.style.fontSize = 'var(--value-max)'
    const max = Number.parseFloat(getComputedStyle(value).fontSize)
    const style = getComputedStyle(value)
    const room =
      value.clientWidth -
      Number.parseFloat(style.paddingLeft) -
      Number.parseFloat(style.paddingRight)
    const wide = text.getBoundingClientRect().width
    if (wide <= room) return
    // text width grows with the font size; 0.98 leaves room for rounding in the glyphs
    let size = Math.max(8, Math.floor((max * room * 0.98) / wide))
    value.style.fontSize = `${size}px`
    while (size > 8 && text.getBoundingClientRect().width > room) {
      size -= 1
      value.style.fontSize = `${size}px`
    }
  }
  fitValue()
  if (byId('value')) {
    // a new width (a turned phone, a resized window) fits again; a new height (its own
    // doing) does not
    let width = -1
    new ResizeObserver(([entry]) => {
      if (entry.contentRect.width === width) return
      width = entry.contentRect.width
      fitValue()
    }).observe(byId('value'))
    document.fonts?.ready.then(fitValue)
  }

  let changeCount = Number(body.dataset.changeCount)

  const renderDescription = (parts) => {
    const el = byId('description')
    el.replaceChildren(
      ...parts.map((part) => {
        if (!part.href || !/^(https?:|mailto:)/i.test(part.href))
          return document.createTextNode(part.text)
        const a = document.createElement('a')
        a.href = part.href
        a.rel = 'nofollow noopener ugc'
        a.textContent = part.text
        return a
      }),
    )
    el.hidden = parts.length === 0
  }

  const renderHistory = (entries) => {
    const list = byId('history-list')
    list.replaceChildren(
      ...entries.map((entry) => {
        const li = document.createElement('li')
        const value = document.createElement('span')
        value.className = 'item-main'
        value.dir = 'auto'
        value.textContent = entry.value
        const side = document.createElement('span')
        side.className = 'item-side'
        side.append(timeElement(entry.at))
        if (entry.by) side.append(` · ${entry.by.name}`)
        li.append(value, side)
        return li
      }),
    )
    byId('history-empty').hidden = entries.length > 0
  }

  const refreshHistory = async () => {
    if (!byId('history-list')) return
    try {
      const res = await fetch(body.dataset.history, { headers: { accept: 'application/json' } })
      if (res.ok) renderHistory(await res.json())
    } catch {
      // the next change tries again
    }
  }

  const render = (status) => {
    byId('name').textContent = status.name
    const value = byId('value')
    byId('value-text').textContent = status.value ?? '—'
    value.classList.toggle('empty', status.value === null)
    // a stale status is grey (slate, colour 11) and says since when (docs/notifications.md#staleness)
    value.className = value.className.replace(/\bc\d+\b/, `c${status.stale ? 11 : status.colorNo}`)
    value.classList.toggle('stale', status.stale === true)
    const stale = byId('stale')
    if (stale && status.stale && status.staleSince) {
      stale.replaceChildren(...withTime('staleSince', timeElement(status.staleSince, true)))
      stale.hidden = false
    } else if (stale) {
      stale.hidden = true
      stale.replaceChildren()
    }
    value.dataset.length = String(Math.min([...(status.value ?? '—')].length, 10))
    fitValue()
    document.title = status.value === null ? status.name : `${status.name}: ${status.value}`
    const changed = byId('changed')
    if (status.valueUpdatedAt) {
      changed.replaceChildren(...withTime('changed', timeElement(status.valueUpdatedAt)))
    } else changed.textContent = say('noValue')
    renderDescription(status.descriptionParts)
    if (status.changeCount !== changeCount) {
      changeCount = status.changeCount
      refreshHistory()
    }
  }

  const live = byId('live')
  // the not-found and error pages share this script, but have no status to follow
  if (!live || !body.dataset.events || !('EventSource' in window)) return
  const setLive = (state, label) => {
    live.dataset.state = state
    live.textContent = label
  }

  const note = byId('gone')
  /** What the page says while it cannot show the status; `null` when it can again. */
  const setNote = (text) => {
    body.classList.toggle('gone', text !== null)
    note.hidden = text === null
    if (text !== null && note.textContent !== text) note.textContent = text
  }

  // Deleted, or a private share link revoked or expired: that never comes back. The page
  // says so and stops.
  const ended = (text) => {
    setNote(text)
    setLive('offline', say('offline'))
    stopped = true
  }
  const isLink = body.dataset.kind === 'link'
  const LINK_ENDED = say('linkEnded')
  const DELETED = say('deleted')
  // A share page's status made private may be made public again; a 404 cannot tell a viewer
  // private from deleted. The page says so and keeps asking.
  const unavailable = () => {
    setNote(say('unavailable'))
    setLive('unavailable', say('notAvailable'))
  }
  /** The share view or a link answered 404. */
  const notFound = () => (isLink ? ended(LINK_ENDED) : unavailable())

  // note: EventSource reconnects by itself after a dropped connection, but gives up for good
  // on any answer other than 200 (a proxy's 502 during a restart, a 503, the 404 of a status
  // made private meanwhile), and the server ends the stream when the status is made private.
  // Then the page asks the share view itself, after a growing pause (1 s, doubling, at most
  // 30 s; at once when the browser comes back online or the tab is shown again): 404 means
  // not shared right now; 200, the stream opens again.
  const viewUrl = body.dataset.events.replace(/\/events$/, '')
  const FIRST_PAUSE = 1000
  const MAX_PAUSE = 30_000
  let pause = FIRST_PAUSE
  let timer = null
  let stopped = false
  let events = null

  const check = async () => {
    timer = null
    if (stopped) return
    try {
      // revalidated (a 304 while current): a copy cached for its 5 s could hide a change
      const res = await fetch(viewUrl, {
        headers: { accept: 'application/json' },
        cache: 'no-cache',
      })
      if (res.status === 404) notFound()
      else if (res.ok) {
        render(await res.json())
        setNote(null)
        return connect()
      }
    } catch {
      // still unreachable: try again later
    }
    if (!stopped) retryLater()
  }

  const retryLater = () => {
    if (stopped || timer !== null) return
    if (live.dataset.state !== 'unavailable') setLive('connecting', say('reconnecting'))
    timer = setTimeout(check, pause)
    pause = Math.min(pause * 2, MAX_PAUSE)
  }

  /** Back online or shown again: ask now rather than at the end of a long pause. */
  const retryNow = () => {
    if (stopped || events !== null || timer === null) return
    clearTimeout(timer)
    pause = FIRST_PAUSE
    check()
  }
  window.addEventListener('online', retryNow)
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') retryNow()
  })

  const connect = () => {
    const source = new EventSource(body.dataset.events)
    events = source
    const close = () => {
      source.close()
      if (events === source) events = null
    }
    source.addEventListener('open', () => {
      pause = FIRST_PAUSE
      setNote(null)
      setLive('live', say('live'))
    })
    source.addEventListener('error', () => {
      if (source.readyState === EventSource.CLOSED) {
        close()
        retryLater()
      } else setLive('connecting', say('reconnecting'))
    })
    source.addEventListener('status', (event) => render(JSON.parse(event.data)))
    source.addEventListener('unavailable', (event) => {
      close()
      let reason
      try {
        reason = JSON.parse(event.data).reason
      } catch {}
      if (reason === 'deleted') return ended(isLink ? LINK_ENDED : DELETED)
      if (isLink) return ended(LINK_ENDED)
      // made private: maybe not for long
      unavailable()
      retryLater()
    })
  }
  connect()
})()
