import type { ComponentChildren } from 'preact'

// A translated sentence with parts that are elements (docs/languages.md): a link, a name in
// bold, a bit of code. The catalog text marks them as tags, `<link>the board</link>` or
// `<name/>`, so each language puts them where its sentence needs them; the catalog text holds
// no markup of its own. What a person typed (a status's name) goes in as a self-closing tag,
// never into the text, so it is never read as a tag.

type Part = (children: string) => ComponentChildren

const TAG = /<([a-z][A-Za-z0-9]*)\/>|<([a-z][A-Za-z0-9]*)>(.*?)<\/\2>/g

/** `text` with each `<tag>…</tag>` or `<tag/>` drawn by `parts[tag]`. */
export function Rich(props: { text: string; parts: Record<string, Part> }) {
  const out: ComponentChildren[] = []
  let last = 0
  for (const match of props.text.matchAll(TAG)) {
    const name = (match[1] ?? match[2]) as string
    const part = props.parts[name]
    if (!part) continue
    out.push(props.text.slice(last, match.index))
    out.push(part(match[3] ?? ''))
    last = match.index + match[0].length
  }
  out.push(props.text.slice(last))
  return <>{out}</>
}
