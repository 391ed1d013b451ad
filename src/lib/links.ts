import { createRequire } from 'node:module'
import { LinkifyIt } from 'linkify-it'

// The one link detector: the plan gate (is there a link in this description?) and the share
// view (which parts are links?) both ask here, so a text refused as a link on a plan without
// links is one a plan with links makes clickable (docs/api.md#plans).

let linkify: LinkifyIt | undefined

/**
 * The link finder, built on first use (its pattern over every top-level domain takes about
 * 15 ms to compile, which a start should not pay). note: fuzzyLink (bare domains like
 * example.com) is off by default in linkify-it 6, so it is switched on; fuzzyEmail is on by
 * default, and an e-mail address is a link a reader can follow, so it counts. Bare domains
 * are matched against IANA's whole list of top-level domains (the `tlds` package), not
 * linkify-it's short default list, which lets `example.dev` or `example.xyz` through.
 */
function linkFinder(): LinkifyIt {
  linkify ??= new LinkifyIt({ fuzzyLink: true }).tlds(
    createRequire(import.meta.url)('tlds') as string[],
    true,
  )
  return linkify
}

/** A link in a text: where it stands, what it reads, where it leads. */
export interface FoundLink {
  index: number
  lastIndex: number
  text: string
  /** The target, normalised: `http://` before a bare domain, `mailto:` before an address. */
  url: string
}

/** The links in a text, in order: URLs, bare domains and e-mail addresses. */
export function findLinks(text: string): FoundLink[] {
  return (linkFinder().match(text) ?? []).map((m) => ({
    index: m.index,
    lastIndex: m.lastIndex,
    text: m.text,
    url: m.url,
  }))
}

/** Only these targets ever become clickable: http(s) and mailto, never `javascript:` or `data:`. */
const SAFE_HREF = /^(https?:\/\/|mailto:)/i

/** Whether a link target may be made clickable on a page. */
export const isSafeHref = (url: string): boolean => SAFE_HREF.test(url)

/** A port after a host name (`example.com:8080/desk`), which hides the domain from linkify-it. */
const PORT = /(\w):\d{1,5}(?=[/?#\s]|$)/g
/** A scheme linkify-it does not know (`sftp://`, `git://`, `ssh://`, `https:example.com`). */
const SCHEME = /\b[a-z][a-z\d+.-]*:(?:\/\/)?/gi

/**
 * True when the text holds a URL, a bare domain or an e-mail address: every text in which
 * `findLinks` finds one, and also what linkify-it passes over but a reader would still
 * follow (a bare domain with a port, a URL of a scheme it does not know), found by testing
 * again with the port and the scheme taken out, so the domain that remains is found as a
 * bare domain. note: those stay text on a page (there is no safe link to make of them),
 * but a plan without links refuses them all the same.
 */
export const containsLink = (text: string): boolean =>
  linkFinder().test(text) ||
  (text.includes(':') && linkFinder().test(text.replace(PORT, '$1').replace(SCHEME, ' ')))
