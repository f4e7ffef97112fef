/**
 * Upserts the svc entry into a YAML file (goose's config.yaml) through `yaml`'s Document API, which keeps the
 * user's comments, other keys and their order. A file that does not parse is refused, not replaced.
 */
import { isMap, parseDocument } from 'yaml';
import { CliFailure } from '../failure.js';
import { sameJson } from './edit-json.js';

export function upsertYaml(file: string, text: string | null, path: string[], value: unknown): string {
  const source = text ?? '';
  const doc = parseDocument(source);
  if (doc.errors.length > 0 || (doc.contents !== null && !isMap(doc.contents))) {
    const why = doc.errors[0]?.message.split('\n')[0] ?? 'not a mapping';
    throw new CliFailure(
      'api',
      'config_unreadable',
      `${file} does not parse (${why}); fix it first, nothing was written`,
    );
  }
  const current: unknown = doc.getIn(path);
  const plain = isMap(current) ? current.toJSON() : current;
  if (text !== null && sameJson(plain, value)) return source;
  doc.setIn(path, doc.createNode(value));
  return doc.toString();
}
