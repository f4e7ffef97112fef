/** Who a signed-in person is, for display: their email and their org's name (the web layout shows both). */
import type { Db } from '../../core/db/database.js';

/** Public to the session's own middleware: the caller passes the user id its verified session names. */
export async function sessionIdentity(db: Db, userId: string): Promise<{ email: string; orgName: string } | undefined> {
  const who = await db
    .selectFrom('users')
    .innerJoin('orgs', 'orgs.id', 'users.org_id')
    .select(['users.email', 'orgs.name'])
    .where('users.id', '=', userId)
    .executeTakeFirst();
  return who ? { email: who.email, orgName: who.name } : undefined;
}
