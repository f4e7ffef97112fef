/**
 * Form inputs with their error beside them: a refused form comes back with each message under its field
 * (`aria-invalid`, `aria-describedby`), the person's input kept, and a summary at the top of the form.
 */
import type { FieldErrors, FormState } from './form.js';

export interface FieldProps {
  /** The form's id prefix, so two forms on one page never share an element id. */
  form: string;
  name: string;
  label: string;
  hint?: string;
  state?: FormState | undefined;
  /** The value shown when the form is not coming back from a refusal. */
  value?: string | undefined;
  type?: string;
  inputmode?: 'decimal' | 'numeric' | 'email' | 'url' | 'text';
  required?: boolean;
  maxlength?: number;
  placeholder?: string;
}

export const fieldId = (form: string, name: string) => `${form}-${name}`.replace(/[^A-Za-z0-9_-]/g, '_');

/** An error message for `name`, if the refused form has one. */
export function FieldError(props: { form: string; name: string; state?: FormState | undefined }) {
  const msg = props.state?.errors[props.name];
  return msg ? (
    <p class="field-error" id={`${fieldId(props.form, props.name)}-error`}>
      {msg}
    </p>
  ) : null;
}

/** `aria-invalid` / `aria-describedby` for an input whose field was refused. */
export function invalidAttrs(form: string, name: string, state?: FormState) {
  return state?.errors[name]
    ? { 'aria-invalid': 'true' as const, 'aria-describedby': `${fieldId(form, name)}-error` }
    : {};
}

export function TextField(p: FieldProps) {
  const id = fieldId(p.form, p.name);
  const value = p.state ? (p.state.values[p.name] ?? '') : (p.value ?? '');
  return (
    <div class="field">
      <label for={id}>
        {p.label} {p.hint ? <span class="hint">{p.hint}</span> : null}
      </label>
      <input
        id={id}
        name={p.name}
        type={p.type ?? 'text'}
        value={value}
        inputmode={p.inputmode}
        required={p.required}
        maxlength={p.maxlength}
        placeholder={p.placeholder}
        {...invalidAttrs(p.form, p.name, p.state)}
      />
      <FieldError form={p.form} name={p.name} state={p.state} />
    </div>
  );
}

/** The top-of-form summary: the form-wide refusal (`_form`) or a count pointing at the fields below. */
export function FormErrors(props: { errors?: FieldErrors | undefined }) {
  const errors = props.errors ?? {};
  const fields = Object.keys(errors).filter((k) => k !== '_form');
  if (!errors._form && fields.length === 0) return null;
  return (
    <p class="notice error" role="alert">
      {errors._form ??
        (fields.length === 1 ? 'Check the field marked below.' : `Check the ${fields.length} fields marked below.`)}
    </p>
  );
}

export function TextArea(p: Omit<FieldProps, 'type' | 'inputmode' | 'placeholder'> & { rows?: number }) {
  const id = fieldId(p.form, p.name);
  const value = p.state ? (p.state.values[p.name] ?? '') : (p.value ?? '');
  return (
    <div class="field">
      <label for={id}>
        {p.label} {p.hint ? <span class="hint">{p.hint}</span> : null}
      </label>
      <textarea
        id={id}
        name={p.name}
        rows={p.rows ?? 6}
        required={p.required}
        maxlength={p.maxlength}
        {...invalidAttrs(p.form, p.name, p.state)}
      >
        {value}
      </textarea>
      <FieldError form={p.form} name={p.name} state={p.state} />
    </div>
  );
}

/**
 * Optional text inputs as a patch: a filled input is sent (trimmed, except multi-line `keepSpace` fields); an
 * empty one is sent as `empty[field]` (`null` clears, `''` empties) or left out (unchanged) when not listed there.
 */
export function patchOf(
  values: Record<string, string>,
  fields: readonly string[],
  empty: Record<string, null | ''> = {},
  keepSpace: readonly string[] = [],
): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const f of fields) {
    const v = values[f];
    if (v === undefined) continue;
    const t = v.trim();
    if (t !== '') out[f] = keepSpace.includes(f) ? v : t;
    else if (f in empty) out[f] = empty[f] ?? null;
  }
  return out;
}
