/** Reads all of stdin (for `--key -` and `--data @-`), so secrets never have to be typed on the command line. */
export async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}
