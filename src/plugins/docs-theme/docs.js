// statusd's API reference (/docs): our name and logo, landmarks and labels around Swagger UI.
// Loaded after Swagger UI's scripts, before it renders (it starts on window load).
;(() => {
  // one landmark for the header, one for the reference: Swagger UI renders into a bare <div>
  const root = document.getElementById('swagger-ui')
  const header = document.createElement('header')
  header.className = 'statusd-header'
  const home = document.createElement('a')
  home.href = '/'
  home.className = 'statusd-home'
  const logo = document.createElement('img')
  logo.src = '/docs/static/theme/logo.svg'
  logo.alt = ''
  logo.width = 32
  logo.height = 32
  home.append(logo, 'statusd')
  const title = document.createElement('h1')
  title.append(home, ' API reference')
  header.append(title)
  const main = document.createElement('main')
  root.replaceWith(main)
  main.append(root)
  main.before(header)

  // Swagger UI's text areas (a request body to edit, a curl command, a response) have no
  // label: each gets one from what it holds, as Swagger UI renders them
  const labelFor = (area) =>
    area.closest('.body-param')
      ? 'Request body'
      : area.classList.contains('curl') || area.closest('.curl-command')
        ? 'curl command'
        : area.closest('.responses-wrapper, .response')
          ? 'Response'
          : 'Text'
  const label = () => {
    for (const area of root.querySelectorAll('textarea:not([aria-label]):not([aria-labelledby])'))
      area.setAttribute('aria-label', labelFor(area))
    // the server picker (the document names its server) has no label either
    for (const select of root.querySelectorAll('select#servers:not([aria-label])'))
      select.setAttribute('aria-label', 'Server')
    // a code block wider than a phone scrolls sideways: reachable from the keyboard too
    for (const code of root.querySelectorAll('pre:not([tabindex])')) code.tabIndex = 0
  }
  new MutationObserver(label).observe(root, { childList: true, subtree: true })

  // phones: Swagger UI's page has no viewport of its own
  const viewport = document.createElement('meta')
  viewport.name = 'viewport'
  viewport.content = 'width=device-width, initial-scale=1'
  document.head.append(viewport)

  // Swagger UI's own dark theme follows the system's
  const dark = matchMedia('(prefers-color-scheme: dark)')
  const scheme = () => document.documentElement.classList.toggle('dark-mode', dark.matches)
  scheme()
  dark.addEventListener('change', scheme)
})()
