/**
 * The 12 status colours (`colorNo` 1..12), in one place for the share page, the badge and
 * the docs. Each is dark enough for white text at WCAG AA (contrast ≥ 4.5:1, checked by a
 * test), in light and dark mode alike. Colour is never the only signal: the value is text.
 */
export const PALETTE = [
  { colorNo: 1, name: 'blue', hex: '#1d4ed8' },
  { colorNo: 2, name: 'red', hex: '#b91c1c' },
  { colorNo: 3, name: 'green', hex: '#15803d' },
  { colorNo: 4, name: 'amber', hex: '#b45309' },
  { colorNo: 5, name: 'purple', hex: '#7e22ce' },
  { colorNo: 6, name: 'teal', hex: '#0f766e' },
  { colorNo: 7, name: 'pink', hex: '#be185d' },
  { colorNo: 8, name: 'indigo', hex: '#4338ca' },
  { colorNo: 9, name: 'cyan', hex: '#0e7490' },
  { colorNo: 10, name: 'brown', hex: '#92400e' },
  { colorNo: 11, name: 'slate', hex: '#475569' },
  { colorNo: 12, name: 'black', hex: '#111827' },
] as const

/** Text colour on every palette colour. */
export const TEXT_ON_COLOR = '#ffffff'

/** The hex colour of a colorNo; out-of-range numbers get colour 1. */
export function colorOf(colorNo: number): string {
  return (PALETTE[colorNo - 1] ?? PALETTE[0]).hex
}

/** CSS classes `.c1`…`.c12` setting `--status-color`, for the share page's stylesheet. */
export const paletteCss = (): string =>
  PALETTE.map((c) => `.c${c.colorNo}{--status-color:${c.hex}}`).join('\n')

/** WCAG 2 contrast ratio of two `#rrggbb` colours. */
export function contrastRatio(a: string, b: string): number {
  const luminance = (hex: string) => {
    const [r, g, b] = [1, 3, 5].map((i) => {
      const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255
      return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
    }) as [number, number, number]
    return 0.2126 * r + 0.7152 * g + 0.0722 * b
  }
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return (hi + 0.05) / (lo + 0.05)
}
