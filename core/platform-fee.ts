/** The platform fee rule shared by the gateway (earnings at settle) and billing (payouts, analytics). */

/** fee = floor(gross × bps / 10 000); the provider's net is the rest, so rounding never takes from the provider. */
export function splitPlatformFee(grossCents: number, feeBps: number): { feeCents: number; netCents: number } {
  const feeCents = Math.floor((grossCents * feeBps) / 10_000);
  return { feeCents, netCents: grossCents - feeCents };
}
