import type { TextareaHTMLAttributes } from 'preact'
import { useId } from 'preact/hooks'
import { PALETTE } from '../../../src/web/palette.ts'
import { ApiError } from '../api.ts'
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
            {c.name}
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

export const ACCESS_OPTIONS = [
  { value: 'private', label: 'Private: only you and the people you share it with' },
  { value: 'public', label: 'Public: anyone with its link' },
] as const

export const LEVEL_OPTIONS = [
  { value: 'owner', label: 'Only you' },
  { value: 'private', label: 'You and people with a role' },
  { value: 'public', label: 'Anyone who may see the status' },
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
      <legend class="label">Palette</legend>
      <p class="hint">
        The values offered as one-tap buttons, each with its colour (at most {MAX_PALETTE}).
      </p>
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
                    <span class="sr-only">Palette value {n}</span>
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
                    <span class="sr-only">Colour of palette value {n}</span>
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
                          {c.name}
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
                    aria-label={`Move palette value ${n} up`}
                    onClick={() => move(i, i - 1)}
                  >
                    ↑
                  </button>
                  <button
                    type="button"
                    class="button quiet"
                    disabled={i === palette.length - 1}
                    aria-label={`Move palette value ${n} down`}
                    onClick={() => move(i, i + 1)}
                  >
                    ↓
                  </button>
                  <button
                    type="button"
                    class="button quiet"
                    aria-label={`Remove palette value ${n}`}
                    onClick={() => onChange(palette.filter((_, j) => j !== i))}
                  >
                    Remove
                  </button>
                </div>
                {valueError && (
                  <p class="field-error">
                    Value {n}: {valueError}
                  </p>
                )}
                {colourError && (
                  <p class="field-error">
                    Colour {n}: {colourError}
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
          Add a value
        </button>
      </div>
    </fieldset>
  )
}
