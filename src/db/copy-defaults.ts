/**
 * Rows per INSERT of `statusd copy` at most; also bounded so one statement stays under every
 * engine's parameter limit. Apart from copy.ts so that the command's help needs none of the
 * storage code (docs/cli.md).
 */
export const DEFAULT_BATCH_SIZE = 1000
