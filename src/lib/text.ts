import { type TSchemaOptions, Type } from 'typebox'
import { withPatternMessage } from './schema.ts'

// The text rules every free-text field shares (docs/api.md#validation-rules): status names,
// values and descriptions, and API key labels. One definition, so a field cannot drift.
//
// note: lengths count code points (Ajv's default), so "80%" is 3 and "🟢" is 1.
// Never allowed: control characters (C0, C1), lone surrogates, and noncharacters (U+FDD0–U+FDEF
// and the last two code points of every plane: U+FFFE and U+FFFF are not XML characters at all,
// so they would make the badge SVG malformed, and HTML counts every noncharacter a parse error).
// Single-line text also refuses the line and paragraph separators and needs at least one visible
// character. Not visible on their own: whitespace, format characters (U+200B),
// default-ignorable ones (Hangul fillers U+3164, variation selectors, U+034F), combining marks
// without a base, and the blank Braille pattern U+2800. Zero-width joiners inside emoji
// sequences, and marks on a visible base, stay allowed.
const SINGLE_LINE =
  '^(?=[^]*?[^\\s\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}\\p{M}\\p{Default_Ignorable_Code_Point}\\p{Noncharacter_Code_Point}\\u2800])[^\\p{Cc}\\p{Cs}\\p{Zl}\\p{Zp}\\p{Noncharacter_Code_Point}]*$'
// Multi-line text may hold tabs and line breaks, but no other control characters (C0 or C1).
const MULTI_LINE =
  '^[^\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F-\\x9F\\p{Cs}\\p{Noncharacter_Code_Point}]*$'

const SINGLE_LINE_MESSAGE =
  'must contain a visible character and no control characters or noncharacters'

/**
 * What is wrong with a single-line text of these lengths, in the words of a validation error,
 * or undefined when it is fine: the schema's rule, for input that does not come through the
 * HTTP API (the admin CLI's key labels). Lengths count code points, as the schema's do.
 */
export function singleLineTextProblem(
  text: string,
  lengths: { minLength: number; maxLength: number },
): string | undefined {
  const length = [...text].length
  if (length < lengths.minLength) return `must be at least ${lengths.minLength} characters`
  if (length > lengths.maxLength) return `must be at most ${lengths.maxLength} characters`
  singleLine ??= new RegExp(SINGLE_LINE, 'u')
  return singleLine.test(text) ? undefined : SINGLE_LINE_MESSAGE
}
let singleLine: RegExp | undefined

/** Single-line text of these lengths; a `pattern` failure answers in words, not the regex. */
export const SingleLineText = (
  options: { minLength: number; maxLength: number } & Pick<
    TSchemaOptions,
    'description' | 'examples'
  >,
) => withPatternMessage(Type.String({ ...options, pattern: SINGLE_LINE }), SINGLE_LINE_MESSAGE)

/** Text that may span lines, at most this long. */
export const MultiLineText = (maxLength: number) =>
  withPatternMessage(
    Type.String({ maxLength, pattern: MULTI_LINE }),
    'must not contain control characters other than tab and line breaks, or noncharacters',
  )
