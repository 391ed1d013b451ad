import type { TextareaHTMLAttributes } from 'preact'
import { useId } from 'preact/hooks'
import { PALETTE } from '../../../src/web/palette.ts'

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
