import type { Db } from '../../db/database.ts'

// leases: work one instance at a time does (docs/integrations.md#one-bridge-across-instances).

/**
 * Takes the lease `name` for `holder` until `until`, or renews it: when no one holds it, its
 * time has passed (`now`), or `holder` holds it already. True when `holder` holds it now.
 * One statement, so two instances taking it at once cannot both win.
 */
export async function takeLease(
  db: Db,
  lease: { name: string; holder: string; now: string; until: string },
): Promise<boolean> {
  const { name, holder, now, until } = lease
  const row = await db
    .insertInto('leases')
    .values({ name, holder, expires_at: until })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ holder, expires_at: until })
        .where((eb) =>
          eb.or([eb('leases.expires_at', '<', now), eb('leases.holder', '=', holder)]),
        ),
    )
    .returning('holder')
    .executeTakeFirst()
  return row?.holder === holder
}

/** Gives the lease up, if `holder` holds it, so another instance takes it at once. */
export async function releaseLease(db: Db, name: string, holder: string): Promise<void> {
  await db.deleteFrom('leases').where('name', '=', name).where('holder', '=', holder).execute()
}
