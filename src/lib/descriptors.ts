import { readdirSync, readFileSync } from 'node:fs'

// How many live streams and connections the server may hold, from its file-descriptor limit
// (docs/operations.md#server-wide-stream-capacity). Every stream holds a socket, and so a
// descriptor, for as long as it lasts; a process out of descriptors can accept nothing (the
// kernel's accept fails and Node resets the connection), so /healthz and keyed writes would
// fail with the streams. Node.js itself raises the soft limit to the hard one as it starts.

/** The limit assumed where it cannot be read (no /proc): the usual default soft limit. */
export const ASSUMED_DESCRIPTOR_LIMIT = 1024

/** The share of the limit streams never take: ordinary requests' connections need it. */
export const REQUEST_SHARE = 0.2

/**
 * The share of the limit connections never take: for what the process opens itself (files it
 * reads, webhook and mail connections, a storage connection opened again).
 */
export const OWN_SHARE = 0.05

/** The soft "Max open files" of a `/proc/<pid>/limits` text; null when it does not say. */
export function parseDescriptorLimit(limits: string): number | null {
  const soft = /^Max open files\s+(\d+)\s/m.exec(limits)?.[1]
  return soft === undefined ? null : Number(soft)
}

/** This process's soft limit on open descriptors (as raised by Node), or null (not Linux). */
export function readDescriptorLimit(): number | null {
  try {
    return parseDescriptorLimit(readFileSync('/proc/self/limits', 'utf8'))
  } catch {
    return null
  }
}

/** Descriptors this process holds now, or null where the system does not list them. */
export function countOpenDescriptors(): number | null {
  for (const dir of ['/proc/self/fd', '/dev/fd']) {
    try {
      // note: reading the folder holds one descriptor of its own, listed too
      return readdirSync(dir).length - 1
    } catch {}
  }
  return null
}

export interface StreamBudget {
  /** The limit the budget is cut from (read, or ASSUMED_DESCRIPTOR_LIMIT). */
  descriptorLimit: number
  /** Whether the limit was read (false: assumed). */
  limitRead: boolean
  /** Descriptors the process held when the budget was set. */
  descriptorsHeld: number
  /** Connections storage may still open (a pool). */
  storageConnections: number
  /** Most live streams at once (STREAMS_MAX when set). */
  streams: number
  /** Most connections at once (`server.maxConnections`); null: not capped (limit not read). */
  maxConnections: number | null
}

/**
 * The budget: with L the limit, H the descriptors held now and P the connections storage may
 * still open, streams get `floor(0.8 L) - H - P` (at least 0): a fifth of the limit stays
 * free for ordinary requests. Connections (streams included) get `floor(0.95 L) - H - P`,
 * so the process never runs out: a connection beyond that is closed as it arrives, and
 * every open one keeps being served. Where the limit could not be read, streams are cut
 * from ASSUMED_DESCRIPTOR_LIMIT and connections are not capped (not on a guess).
 * `streamsMax` (STREAMS_MAX) replaces the stream figure.
 */
export function streamBudget({
  limit,
  held,
  storageConnections,
  streamsMax,
}: {
  limit: number | null
  held: number | null
  storageConnections: number
  streamsMax: number | null
}): StreamBudget {
  const descriptorLimit = limit ?? ASSUMED_DESCRIPTOR_LIMIT
  const descriptorsHeld = held ?? 0
  const taken = descriptorsHeld + storageConnections
  const streams = Math.max(0, Math.floor(descriptorLimit * (1 - REQUEST_SHARE)) - taken)
  const connections = Math.max(0, Math.floor(descriptorLimit * (1 - OWN_SHARE)) - taken)
  return {
    descriptorLimit,
    limitRead: limit !== null,
    descriptorsHeld,
    storageConnections,
    streams: streamsMax ?? streams,
    maxConnections: limit === null ? null : connections,
  }
}
