/** Who a signed-in person is, for display: their email and their org's name (the web layout shows both). */
import type { Db } from '../../core/db/database.js';

/**
 * @public the web session middleware passes the user id of a session it has just verified; the answer is that
 * person's own email and org name, shown only back to them.
 */
export async function sessionIdentity(db: Db, userId: string): Promise<{ email: string; orgName: string } | undefined> {
  const who = await db
    .selectFrom('users')
    .innerJoin('orgs', 'orgs.id', 'users.org_id')
    .select(['users.email', 'orgs.name'])
    .where('users.id', '=', userId)
    .executeTakeFirst();
  return who ? { email: who.email, orgName: who.name } : undefined;
}
