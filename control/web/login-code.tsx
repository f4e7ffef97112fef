/** The pieces every "enter the code we mailed" form shares: the sign-in page and the OAuth step-up page. */

/** The error, or the generic "a code is on its way" (identical whether or not the account exists). */
export function CodeSentNotice(props: { email: string; error?: string | undefined }) {
  return props.error ? (
    <p class="notice error" role="alert">
      {props.error}
    </p>
  ) : (
    <p class="notice" role="status">
      If {props.email} can receive mail, a 6-digit code valid for 10 minutes is on its way.
    </p>
  );
}

/** `required` is off where the same form also carries a Deny button, which must submit without a code. */
export function CodeInput(props: { required: boolean }) {
  return (
    <label>
      Code from the email
      <input
        name="code"
        inputmode="numeric"
        autocomplete="one-time-code"
        pattern="[0-9]{6}"
        maxlength={6}
        required={props.required}
      />
    </label>
  );
}
