// What every command shares, the admin and the client ones: kept apart from the database
// helpers (context.ts) so that the client commands start without loading the store.

/** Thrown for a wrong invocation: printed with a pointer to the help, exit code 2. */
export class UsageError extends Error {
  override name = 'UsageError'
  /** The command whose help explains it (`user add`), when known. */
  readonly command: string

  constructor(message: string, command = '') {
    super(message)
    this.command = command
  }
}

export interface Output {
  json: boolean
  out: (text: string) => void
}

/** Prints a result: JSON with --json, else the human-readable lines. */
export function print(output: Output, value: unknown, human: () => string): void {
  output.out(output.json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`)
}

/**
 * Rows as columns separated by two spaces, each as wide as its widest cell (the last one
 * unpadded), the first row being the header.
 */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = []
  for (const row of rows)
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, [...cell].length)
    })
  return rows
    .map((row) =>
      row
        .map((cell, i) =>
          i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - [...cell].length),
        )
        .join('  '),
    )
    .join('\n')
}
