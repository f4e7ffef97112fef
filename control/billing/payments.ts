/**
 * The payment back-end interface: Stripe (SVC_STRIPE_SECRET_KEY set) or the local test-payments mode.
 * Filled in by the billing domain (issue: billing); the control plane only needs the handle.
 */
export interface PaymentsBackend {
  readonly kind: 'stripe' | 'test';
}

export function createPaymentsBackend(opts: { stripeSecretKey: string | undefined }): PaymentsBackend {
  return { kind: opts.stripeSecretKey ? 'stripe' : 'test' };
}
