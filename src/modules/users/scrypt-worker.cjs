'use strict'
// One scrypt hash, on a thread of the password hash pool (passwords.ts): the synchronous form,
// so the hash takes this thread and no thread of libuv's pool, which file and DNS work shares.
// Plain JavaScript, so that the thread loads no TypeScript support (it stays light).
const { scryptSync } = require('node:crypto')

module.exports = ({ password, salt, length, N, r, p, maxmem }) =>
  scryptSync(password, salt, length, { N, r, p, maxmem })
