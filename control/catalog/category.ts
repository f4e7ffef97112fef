/** Category names are stored normalised, and every filter normalises the same way (`Developer Tools` = `developer-tools`). */
export function normalizeCategory(c: string): string {
  const v = c
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return v || 'other';
}
