import assert from 'node:assert/strict'
import { AxeBuilder } from '@axe-core/playwright'
import type { AxeResults, Result } from 'axe-core'
import type { Page } from 'playwright-core'

/** The rule sets every page of ours is held to: WCAG 2.0/2.1 A and AA, and WCAG 2.2 AA. */
export const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']

export type AxeOptions = {
  /** CSS selectors left out of the scan (e.g. a third-party widget judged separately). */
  exclude?: string[]
  /** Rule ids switched off, each with its reason in the calling test. */
  disableRules?: string[]
}

/** axe's findings on the page as it is now, with the WCAG tags above. */
export async function axeViolations(page: Page, options: AxeOptions = {}): Promise<Result[]> {
  let builder = new AxeBuilder({ page }).withTags(WCAG_TAGS)
  for (const selector of options.exclude ?? []) builder = builder.exclude(selector)
  if (options.disableRules?.length) builder = builder.disableRules(options.disableRules)
  const results: AxeResults = await builder.analyze()
  return results.violations
}

/** One violation per block: rule id, impact, what it means, and each failing node's selector. */
export function formatViolations(violations: Result[]): string {
  return violations
    .map((v) => {
      const nodes = v.nodes
        .slice(0, 10)
        .map((n) => {
          const detail = n.failureSummary?.split('\n').slice(1).join(' ').trim()
          return `    - ${n.target.join(' >> ')}${detail ? `\n      ${detail}` : ''}`
        })
        .join('\n')
      const more = v.nodes.length > 10 ? `\n    … and ${v.nodes.length - 10} more` : ''
      return `  [${v.impact ?? 'unknown'}] ${v.id}: ${v.help} (${v.nodes.length} node(s))\n    ${v.helpUrl}\n${nodes}${more}`
    })
    .join('\n')
}

/**
 * Fails with a readable list when axe finds anything on the page (WCAG 2.2 AA and below).
 * `label` names the page and its state in the message, e.g. 'share page, dark, 375 px'.
 */
export async function expectNoAxeViolations(
  page: Page,
  label: string,
  options: AxeOptions = {},
): Promise<void> {
  const violations = await axeViolations(page, options)
  if (violations.length === 0) return
  assert.fail(
    `axe found ${violations.length} kind(s) of accessibility violation on ${label}:\n${formatViolations(violations)}`,
  )
}
