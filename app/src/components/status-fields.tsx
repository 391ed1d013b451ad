import type { TextareaHTMLAttributes } from 'preact'
import { useId } from 'preact/hooks'
import { PALETTE } from '../../../src/web/palette.ts'
import { ApiError } from '../api.ts'
import { t } from '../i18n.ts'
import type { PaletteEntry } from '../types.ts'
import { ValueChip } from './status-bits.tsx'

// Form fields of a status that the plain Field does not cover: the colour picker (radio
// buttons with the colours' names: colour is never the only cue), a description, and a
// choice among a few options. Errors are the API's own, tied to the field.

export function ColourPicker(props: {
  legend: string
  name: string
  value: number
  onChange: (colorNo: number) => void
  error?: string | undefined
}) {
  const id = useId()
  return (
    <fieldset
      class="field colour-picker"
      aria-describedby={props.error ? `${id}-error` : undefined}
    >
      <legend class="label">{props.legend}</legend>
      <div class="colour-options">
        {PALETTE.map((c) => (
          <label key={c.colorNo} class="colour-option" style={{ '--status-color': c.hex }}>
            <input
              type="radio"
              name={props.name}
              value={c.colorNo}
              checked={props.value === c.colorNo}
              onChange={() => props.onChange(c.colorNo)}
            />
            <span class="swatch" aria-hidden="true" />
            {colourName(c.colorNo)}
          </label>
        ))}
      </div>
      {props.error && (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      )}
    </fieldset>
  )
}

export function TextAreaField(
  props: {
    label: string
    error?: string | undefined
    hint?: string
  } & TextareaHTMLAttributes<HTMLTextAreaElement>,
) {
  const { label, error, hint, ...rest } = props
  const id = useId()
  const describedBy = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ')
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      <textarea
        id={id}
        rows={3}
        {...rest}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={describedBy || undefined}
      />
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  )
}

export function Choice<T extends string>(props: {
  legend: string
  name: string
  value: T
  options: readonly { value: T; label: string }[]
  onChange: (value: T) => void
  error?: string | undefined
  hint?: string
}) {
  const id = useId()
  return (
    <fieldset
      class="field choice"
      aria-describedby={
        [props.hint && `${id}-hint`, props.error && `${id}-error`].filter(Boolean).join(' ') ||
        undefined
      }
    >
      <legend class="label">{props.legend}</legend>
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      {props.options.map((option) => (
        <label key={option.value} class="choice-option">
          <input
            type="radio"
            name={props.name}
            value={option.value}
            checked={props.value === option.value}
            onChange={() => props.onChange(option.value)}
          />
          {option.label}
        </label>
      ))}
      {props.error && (
        <p class="field-error" id={`${id}-error`}>
          {props.error}
        </p>
      )}
    </fieldset>
  )
}

/** The colours' names in the language shown, by `colorNo` (src/web/palette.ts). */
const COLOUR_NAMES: Record<number, () => string> = {
  1: () => t('app.statusFields.colour.blue'),
  2: () => t('app.statusFields.colour.red'),
  3: () => t('app.statusFields.colour.green'),
  4: () => t('app.statusFields.colour.amber'),
  5: () => t('app.statusFields.colour.purple'),
  6: () => t('app.statusFields.colour.teal'),
  7: () => t('app.statusFields.colour.pink'),
  8: () => t('app.statusFields.colour.indigo'),
  9: () => t('app.statusFields.colour.cyan'),
  10: () => t('app.statusFields.colour.brown'),
  11: () => t('app.statusFields.colour.slate'),
  12: () => t('app.statusFields.colour.black'),
}

const colourName = (colorNo: number): string => COLOUR_NAMES[colorNo]?.() ?? String(colorNo)

// the labels are read when shown, so they follow the language (getters)
export const ACCESS_OPTIONS = [
  {
    value: 'private',
    get label() {
      return t('app.statusFields.access.private')
    },
  },
  {
    value: 'public',
    get label() {
      return t('app.statusFields.access.public')
    },
  },
] as const

export const LEVEL_OPTIONS = [
  {
    value: 'owner',
    get label() {
      return t('app.statusFields.level.owner')
    },
  },
  {
    value: 'private',
    get label() {
      return t('app.statusFields.level.private')
    },
  },
  {
    value: 'public',
    get label() {
      return t('app.statusFields.level.public')
    },
  },
] as const

const MAX_PALETTE = 12

/** The API's messages about the palette (`palette`, `palette.1.value`, …). */
export const paletteErrorsOf = (error: unknown): { field: string; message: string }[] =>
  error instanceof ApiError ? error.errors.filter((e) => e.field.startsWith('palette')) : []

/** Up to 12 values with their colours, in the order the buttons show them. */
export function PaletteEditor(props: {
  palette: PaletteEntry[]
  onChange: (palette: PaletteEntry[]) => void
  errors: { field: string; message: string }[]
}) {
  const { palette, onChange } = props
  const move = (from: number, to: number) => {
    const next = [...palette]
    const [entry] = next.splice(from, 1)
    if (entry) next.splice(to, 0, entry)
    onChange(next)
  }
  const errorAt = (i: number, part: string) =>
    props.errors.find((e) => e.field === `palette.${i}.${part}`)?.message
  const whole = props.errors.find((e) => e.field === 'palette')?.message
  return (
    <fieldset class="field palette-editor">
      <legend class="label">{t('app.statusFields.palette.legend')}</legend>
      <p class="hint">{t('app.statusFields.palette.hint', { max: MAX_PALETTE })}</p>
      {whole && <p class="field-error">{whole}</p>}
      {palette.length > 0 && (
        <ol class="palette-rows">
          {palette.map((entry, i) => {
            const n = i + 1
            const valueError = errorAt(i, 'value')
            const colourError = errorAt(i, 'colorNo')
            return (
              <li key={i} class="palette-row">
                <div class="palette-cells">
                  <label>
                    <span class="sr-only">{t('app.statusFields.palette.value', { n })}</span>
                    <input
                      value={entry.value}
                      aria-invalid={valueError ? 'true' : undefined}
                      onInput={(e) => {
                        const next = [...palette]
                        next[i] = { ...entry, value: e.currentTarget.value }
                        onChange(next)
                      }}
                    />
                  </label>
                  <label>
                    <span class="sr-only">{t('app.statusFields.palette.colour', { n })}</span>
                    <select
                      value={entry.colorNo}
                      onChange={(e) => {
                        const next = [...palette]
                        next[i] = { ...entry, colorNo: Number(e.currentTarget.value) }
                        onChange(next)
                      }}
                    >
                      {PALETTE.map((c) => (
                        <option key={c.colorNo} value={c.colorNo}>
                          {colourName(c.colorNo)}
                        </option>
                      ))}
                    </select>
                  </label>
                  <ValueChip value={entry.value || '…'} colorNo={entry.colorNo} />
                </div>
                <div class="palette-moves">
                  <button
                    type="button"
                    class="button quiet"
                    disabled={i === 0}
                    aria-label={t('app.statusFields.palette.up', { n })}
                    onClick={() => move(i, i - 1)}
                  >
                    ↑
                  </button>
                  <button
                    type="button"
                    class="button quiet"
                    disabled={i === palette.length - 1}
                    aria-label={t('app.statusFields.palette.down', { n })}
                    onClick={() => move(i, i + 1)}
                  >
                    ↓
                  </button>
                  <button
                    type="button"
                    class="button quiet"
                    aria-label={t('app.statusFields.palette.removeLabel', { n })}
                    onClick={() => onChange(palette.filter((_, j) => j !== i))}
                  >
                    {t('app.statusFields.palette.remove')}
                  </button>
                </div>
                {valueError && (
                  <p class="field-error">
                    {t('app.statusFields.palette.valueError', { n, message: valueError })}
                  </p>
                )}
                {colourError && (
                  <p class="field-error">
                    {t('app.statusFields.palette.colourError', { n, message: colourError })}
                  </p>
                )}
              </li>
            )
          })}
        </ol>
      )}
      <div class="actions">
        <button
          type="button"
          class="button"
          disabled={palette.length >= MAX_PALETTE}
          onClick={() => onChange([...palette, { value: '', colorNo: 1 }])}
        >
          {t('app.statusFields.palette.add')}
        </button>
      </div>
    </fieldset>
  )
}
