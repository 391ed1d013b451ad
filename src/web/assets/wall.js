// statusd wall page (docs/app.md#walls-and-the-wall-page): the tiles fitted to the screen, kept
// live over ONE event stream for the whole board. Plain JavaScript, no build step; served as
// a file (CSP: script-src 'self'). Every text goes in through textContent.
;(() => {
  const main = document.querySelector('main.wall[data-share-id]')
  if (!main) return
  const shareId = main.dataset.shareId
  const grid = main.querySelector('.tiles')
  const connection = main.querySelector('.connection')
  const title = main.querySelector('h1')
  const base = `/b/${encodeURIComponent(shareId)}`
  // the wall's words in its language (docs/languages.md), from the server: `data-texts`
  let texts = {}
  try {
    texts = JSON.parse(main.dataset.texts || '{}')
  } catch {}
  const word = (key) => (typeof texts[key] === 'string' ? texts[key] : '')

  // ---- relative times ("5 minutes ago"), refreshed every 30 s ----
  // in the wall's language, in the viewer's own region of it (as the share page)
  const pageLang = document.documentElement.lang || 'en'
  const lang =
    (navigator.languages || []).find((tag) => tag.split('-')[0] === pageLang.split('-')[0]) ||
    pageLang
  const relative = new Intl.RelativeTimeFormat(lang, { numeric: 'auto' })
  const UNITS = [
    ['year', 365 * 24 * 3600],
    ['month', 30 * 24 * 3600],
    ['week', 7 * 24 * 3600],
    ['day', 24 * 3600],
    ['hour', 3600],
    ['minute', 60],
  ]
  const ago = (iso) => {
    const at = new Date(iso)
    if (Number.isNaN(at.getTime())) return ''
    const seconds = Math.max(0, (Date.now() - at.getTime()) / 1000)
    for (const [unit, size] of UNITS)
      if (seconds >= size) return relative.format(-Math.floor(seconds / size), unit)
    return word('justNow')
  }
  const refreshTimes = () => {
    for (const el of grid.querySelectorAll('time[datetime]')) el.textContent = ago(el.dateTime)
  }

  // ---- fitting: columns and type size from the number of tiles and the space ----
  const px = (value) => Number.parseFloat(value) || 0
  /**
   * The number of columns that gives the largest tiles (their height and their width both
   * count, a tile about twice as wide as high reads best), then the type size that fills
   * them; a value too wide for its tile is made smaller on its own.
   */
  const layout = () => {
    const tiles = grid.children
    const n = tiles.length
    if (n === 0) return
    grid.classList.add('fitted')
    const style = getComputedStyle(grid)
    const gap = px(style.columnGap)
    const width = grid.clientWidth
    const height = grid.clientHeight
    let best = { score: -1, cols: 1, rows: n, w: width, h: height }
    for (let cols = 1; cols <= n; cols++) {
      const rows = Math.ceil(n / cols)
      const w = (width - gap * (cols - 1)) / cols
      const h = (height - gap * (rows - 1)) / rows
      if (w <= 0 || h <= 0) continue
      const score = Math.min(w, h * 2)
      if (score > best.score) best = { score, cols, rows, w, h }
    }
    grid.style.setProperty('--cols', String(best.cols))
    grid.style.setProperty('--rows', String(best.rows))
    // a tile holds the value (1.15 lines), the name (0.4 × 1.15) and the time (0.28 × 1.15),
    // with padding 0.3: about 2.1 × the type size high; a value of ~6 characters fills its width
    const fs = Math.max(6, Math.min(best.h / 2.15, best.w / 4.2))
    grid.style.setProperty('--fs', `${fs.toFixed(1)}px`)
    for (const tile of tiles) fitValue(tile, fs)
  }
  /** The value on one line, shrunk until it fits its tile's width (never broken in a word). */
  const fitValue = (tile, fs) => {
    const value = tile.querySelector('.value')
    if (!value) return
    value.style.fontSize = ''
    const room = tile.clientWidth - px(getComputedStyle(tile).paddingLeft) * 2
    const wide = value.scrollWidth
    if (wide > room && wide > 0)
      value.style.fontSize = `${Math.max(4, Math.floor((fs * room * 0.97) / wide))}px`
  }
  let pending = 0
  const relayout = () => {
    cancelAnimationFrame(pending)
    pending = requestAnimationFrame(layout)
  }
  new ResizeObserver(relayout).observe(grid)

  // ---- tiles ----
  const byId = new Map()
  const index = () => {
    byId.clear()
    for (const tile of grid.children) byId.set(tile.dataset.statusId, tile)
  }
  const makeTile = (statusId) => {
    const tile = document.createElement('li')
    tile.dataset.statusId = statusId
    tile.className = 'tile off'
    const value = document.createElement('span')
    value.className = 'value'
    const name = document.createElement('span')
    name.className = 'name'
    const meta = document.createElement('span')
    meta.className = 'meta'
    const time = document.createElement('time')
    const stale = document.createElement('span')
    stale.className = 'stale'
    stale.hidden = true
    stale.textContent = word('stale')
    const why = document.createElement('span')
    why.className = 'why'
    why.hidden = true
    why.textContent = word('privateOrDeleted')
    meta.append(time, stale, why)
    tile.append(value, name, meta)
    return tile
  }
  /** A tile showing this status (share view), or greyed out when it is not available. */
  const show = (tile, status) => {
    const value = tile.querySelector('.value')
    const name = tile.querySelector('.name')
    const time = tile.querySelector('time')
    const stale = tile.querySelector('.stale')
    const why = tile.querySelector('.why')
    if (!status) {
      tile.className = 'tile off'
      value.textContent = '—'
      value.removeAttribute('dir')
      name.textContent = word('notAvailable')
      name.removeAttribute('dir')
      time.removeAttribute('datetime')
      time.textContent = ''
      stale.hidden = true
      if (why) why.hidden = false
      return
    }
    if (why) why.hidden = true
    const colorNo = Number.isInteger(status.colorNo) ? status.colorNo : 1
    // a stale status is grey (slate, colour 11), as on the share page and the badge: its
    // colour no longer says how things are (docs/notifications.md#staleness)
    tile.className = status.stale === true ? 'tile c11 stale' : `tile c${colorNo}`
    value.textContent = status.value ?? '—'
    value.dir = 'auto'
    name.textContent = status.name
    name.dir = 'auto'
    if (status.valueUpdatedAt) {
      time.dateTime = status.valueUpdatedAt
      time.textContent = ago(status.valueUpdatedAt)
    } else {
      time.removeAttribute('datetime')
      time.textContent = ''
    }
    stale.hidden = status.stale !== true
    fitValue(tile, px(getComputedStyle(grid).getPropertyValue('--fs')))
  }
  /** The board as it now is (its JSON): tiles added, removed, reordered, brought up to date. */
  const render = (board) => {
    title.textContent = board.name
    document.title = board.name
    const tiles = board.tiles.map(({ statusId, status }) => {
      const tile = byId.get(statusId) ?? makeTile(statusId)
      show(tile, status)
      return tile
    })
    grid.replaceChildren(...tiles)
    index()
    relayout()
  }

  // ---- the one stream, and recovery ----
  let source = null
  let retryMs = 1000
  let timer = 0
  const say = (text) => {
    connection.textContent = text
  }
  const stop = () => {
    if (source) source.close()
    source = null
  }
  /** Tries again later, each time waiting longer: 1 s doubling to 30 s. */
  const retry = (text) => {
    stop()
    say(text)
    clearTimeout(timer)
    timer = setTimeout(start, retryMs)
    retryMs = Math.min(retryMs * 2, 30_000)
  }
  /** Reads the board afresh, then opens its stream (which sends every current state first). */
  const start = async () => {
    clearTimeout(timer)
    let res
    try {
      res = await fetch(`${base}/json`, { cache: 'no-store' })
    } catch {
      return retry(word('reconnecting'))
    }
    if (res.status === 404) {
      render({ name: title.textContent, tiles: [] })
      return retry(word('unavailable'))
    }
    if (!res.ok) return retry(word('reconnecting'))
    try {
      render(await res.json())
    } catch {
      return retry(word('reconnecting'))
    }
    open()
  }
  const open = () => {
    stop()
    const es = new EventSource(`${base}/events`)
    source = es
    es.addEventListener('open', () => {
      retryMs = 1000
      say('')
    })
    es.addEventListener('status', (event) => {
      const data = JSON.parse(event.data)
      const tile = byId.get(data.statusId)
      if (tile) show(tile, data.status)
    })
    es.addEventListener('unavailable', (event) => {
      const data = JSON.parse(event.data)
      const tile = byId.get(data.statusId)
      if (tile) show(tile, null)
    })
    // the board changed (its statuses, its access) or went: read it again
    es.addEventListener('board', () => {
      stop()
      start()
    })
    es.addEventListener('error', () => {
      // the browser retries a dropped stream on its own; a refused one (the board went
      // private, the server is down) it gives up: then we start over, reading the board
      if (es.readyState === EventSource.CLOSED) retry(word('reconnecting'))
      else say(word('reconnecting'))
    })
  }

  index()
  layout()
  refreshTimes()
  setInterval(refreshTimes, 30_000)
  // while offline nothing can work; back online, at once
  window.addEventListener('online', () => {
    retryMs = 1000
    start()
  })
  open()
})()
