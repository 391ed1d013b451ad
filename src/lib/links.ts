import { createRequire } from 'node:module'
import { LinkifyIt } from 'linkify-it'

// The one link detector: the plan gate (is there a link in this description?) and the share
// view (which parts are links?) both ask here, so a text refused as a link on a plan without
// links is one a plan with links makes clickable (docs/api.md#plans).

let linkify: LinkifyIt | undefined

/**
 * The link finder, built on first use (its pattern over every top-level domain takes long
 * to compile, which a start should not pay). note: fuzzyLink (bare domains like
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

/** Characters that hide nothing of a link once gone: default-ignorable code points (U+200B…). */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu
/** The full stops IDNA reads as the dot between labels (U+3002, U+FF0E, U+FF61). */
const IDEOGRAPHIC_STOPS = /[\u3002\uff0e\uff61]/g

// note: made on first use, not at start (cold start)
let graphemes: Intl.Segmenter | undefined

/** A text as the detector reads it, and where each of its UTF-16 units came from. */
interface Folded {
  text: string
  /** For each unit of `text`: the start, in the original, of the grapheme it came from. */
  from: number[]
  /** For each unit of `text`: the end, in the original, of the grapheme it came from. */
  to: number[]
}

/**
 * The text a reader (and a browser's address bar) would take a link from: each grapheme in
 * Unicode NFKC (full-width `ｈｔｔｐｓ：／／` is `https://`), default-ignorable code points
 * taken out (`example.com\u200b/x` is `example.com/x`) and the ideographic full stops IDNA
 * maps to `.` made dots. Only what the detector reads: the stored text stays as it was sent
 * (docs/api.md#plans). Folded grapheme by grapheme, so every match maps back to the text.
 */
function fold(text: string): Folded {
  const folded: Folded = { text: '', from: [], to: [] }
  graphemes ??= new Intl.Segmenter('en', { granularity: 'grapheme' })
  for (const { segment, index } of graphemes.segment(text)) {
    const out = segment.normalize('NFKC').replace(IGNORABLE, '').replace(IDEOGRAPHIC_STOPS, '.')
    folded.text += out
    for (let i = 0; i < out.length; i++) {
      folded.from.push(index)
      folded.to.push(index + segment.length)
    }
  }
  return folded
}

/** Whether folding could change what the detector finds (plain ASCII never does). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the whole ASCII range, controls included
const NEEDS_FOLDING = /[^\x00-\x7f]/

/** A linkify-it match as a FoundLink. */
const toFound = (m: {
  index: number
  lastIndex: number
  text: string
  url: string
}): FoundLink => ({
  index: m.index,
  lastIndex: m.lastIndex,
  text: m.text,
  url: m.url,
})

/**
 * The links in a text, in order: URLs, bare domains and e-mail addresses, found in the
 * folded text (look-alikes included); `index`, `lastIndex` and `text` are the original's,
 * `url` the folded target.
 */
export function findLinks(text: string): FoundLink[] {
  if (!NEEDS_FOLDING.test(text)) return (linkFinder().match(text) ?? []).map(toFound)
  const folded = fold(text)
  return (linkFinder().match(folded.text) ?? []).map((m) => {
    const index = folded.from[m.index] as number
    const lastIndex = folded.to[m.lastIndex - 1] as number
    return { index, lastIndex, text: text.slice(index, lastIndex), url: m.url }
  })
}

/** Only these targets ever become clickable: http(s) and mailto, never `javascript:` or `data:`. */
const SAFE_HREF = /^(https?:\/\/|mailto:)/i

/** Whether a link target may be made clickable on a page. */
export const isSafeHref = (url: string): boolean => SAFE_HREF.test(url)

/** A port after a host name (`example.com:8080/desk`), which hides the domain from linkify-it. */
const PORT = /(\w):\d{1,5}(?=[/?#\s]|$)/g
/** A scheme linkify-it does not know (`sftp://`, `git://`, `ssh://`, `https:example.com`). */
const SCHEME = /\b[a-z][a-z\d+.-]*:(?:\/\/)?/gi

/** The plain test on a text already folded, and again without ports and unknown schemes. */
const holdsLink = (text: string): boolean =>
  linkFinder().test(text) ||
  (text.includes(':') && linkFinder().test(text.replace(PORT, '$1').replace(SCHEME, ' ')))

/**
 * True when the text holds a URL, a bare domain or an e-mail address: every text in which
 * `findLinks` finds one, look-alikes included (full-width forms, invisible characters,
 * ideographic full stops: tested on the folded text as well as on the text itself), and
 * also what linkify-it passes over but a reader would still follow (a bare domain with a
 * port, a URL of a scheme it does not know), found by testing again with the port and the
 * scheme taken out, so the domain that remains is found as a bare domain. note: those stay
 * text on a page (there is no safe link to make of them), but a plan without links refuses
 * them all the same.
 */
export const containsLink = (text: string): boolean =>
  holdsLink(text) || (NEEDS_FOLDING.test(text) && holdsLink(fold(text).text))
