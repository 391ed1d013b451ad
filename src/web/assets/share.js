// statusd share page: live updates over Server-Sent Events. Plain JavaScript, no build step;
// served as a file (CSP: script-src 'self'). Every text goes in through textContent.
;(() => {
  const body = document.body
  const byId = (id) => document.getElementById(id)
  const when = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

  /** Shows a <time> in the viewer's own time zone and language. */
  const localise = (el) => {
    const at = new Date(el.dateTime)
    if (Number.isNaN(at.getTime())) return
    el.textContent = when.format(at)
    el.title = at.toISOString()
  }
  for (const el of document.querySelectorAll('time[datetime]')) localise(el)

  const timeElement = (iso) => {
    const el = document.createElement('time')
    el.dateTime = iso
    el.textContent = iso
    localise(el)
    return el
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
    value.textContent = status.value ?? '—'
    value.classList.toggle('empty', status.value === null)
    value.className = value.className.replace(/\bc\d+\b/, `c${status.colorNo}`)
    document.title = status.value === null ? status.name : `${status.name}: ${status.value}`
    const changed = byId('changed')
    if (status.valueUpdatedAt) {
      changed.replaceChildren('Changed ', timeElement(status.valueUpdatedAt))
    } else changed.textContent = 'No value yet'
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

  const ended = () => {
    body.classList.add('gone')
    byId('gone').hidden = false
    setLive('offline', 'Offline')
  }

  // note: EventSource reconnects by itself after a dropped connection, but gives up for good
  // on any answer other than 200 (a proxy's 502 during a restart, a 503, the 404 of a status
  // deleted meanwhile). Then the page asks the share view itself: 404 means sharing ended;
  // anything else, it opens a new stream after a growing pause.
  const viewUrl = body.dataset.events.replace(/\/events$/, '')
  let pause = 2000
  const retryLater = () => {
    setLive('connecting', 'Reconnecting…')
    setTimeout(async () => {
      try {
        // revalidated (a 304 while current): a copy cached for its 5 s could hide an ending
        const res = await fetch(viewUrl, {
          headers: { accept: 'application/json' },
          cache: 'no-cache',
        })
        if (res.status === 404) return ended()
        if (res.ok) render(await res.json())
      } catch {
        // still unreachable: the stream below fails too, and this runs again
      }
      connect()
    }, pause)
    pause = Math.min(pause * 2, 60_000)
  }

  const connect = () => {
    const events = new EventSource(body.dataset.events)
    events.addEventListener('open', () => {
      pause = 2000
      setLive('live', 'Live')
    })
    events.addEventListener('error', () => {
      if (events.readyState === EventSource.CLOSED) retryLater()
      else setLive('connecting', 'Reconnecting…')
    })
    events.addEventListener('status', (event) => render(JSON.parse(event.data)))
    events.addEventListener('unavailable', () => {
      events.close()
      ended()
    })
  }
  connect()
})()
