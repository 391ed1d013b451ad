import { validationError } from '../../lib/errors.ts'
import type { PaletteEntry } from './statuses.schemas.ts'

// The value palette (docs/app.md#value-palette): values the owner offers, each with its
// colour. Stored as JSON text in statuses.palette (null: none); answered as an array ([]).

/** The palette stored in a row, as the API shows it ([] when there is none). */
export function parsePalette(text: string | null): PaletteEntry[] {
  if (text === null) return []
  // note: only this module writes the column, always from a validated palette
  return JSON.parse(text) as PaletteEntry[]
}

/** The column's text for a palette a client sent: null or [] clear it. */
export const storedPalette = (palette: PaletteEntry[] | null): string | null =>
  palette === null || palette.length === 0
    ? null
    : JSON.stringify(palette.map(({ value, colorNo }) => ({ value, colorNo })))

/**
 * Throws 400 validationError when a value appears twice in the palette: which colour a write
 * of it would take would be ambiguous. Values compare exactly as a write's value is matched.
 */
export function assertUniquePalette(palette: PaletteEntry[] | null | undefined): void {
  if (!palette) return
  const seen = new Set<string>()
  const errors = palette.flatMap((entry, i) => {
    const repeated = seen.has(entry.value)
    seen.add(entry.value)
    return repeated
      ? [{ field: `palette.${i}.value`, message: 'must be unique within the palette' }]
      : []
  })
  if (errors.length > 0) throw validationError(errors, 'Request body is invalid')
}

/**
 * The colour a write's value takes from the palette (docs/app.md#value-palette): the entry's
 * colorNo when the value is in the palette exactly as written (case and all), else undefined
 * (the colour stays as it is).
 */
export const paletteColor = (palette: readonly PaletteEntry[], value: string): number | undefined =>
  palette.find((entry) => entry.value === value)?.colorNo
