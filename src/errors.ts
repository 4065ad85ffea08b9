// An error whose message is already written for the agent: said as is, without "unexpected failure".
export class UserFacingError extends Error {
  override name = 'UserFacingError';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const isUuid = (v: string) => UUID.test(v);

/** Ids are checked before any request, so a typo never costs a round trip. */
export function requireUuid(value: string, field: string, listedBy: string): string {
  const v = value.trim();
  if (!UUID.test(v)) {
    const shown = v.length > 60 ? `${v.slice(0, 57)}...` : v;
    throw new UserFacingError(`${field} "${shown}" is not a UUID (like 3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e); ${listedBy} shows the ids you can use`);
  }
  return v;
}
