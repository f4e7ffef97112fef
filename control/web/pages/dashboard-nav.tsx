/** The dashboard's section links, shown at the top of each dashboard page. */
const SECTIONS = [
  ['/dashboard', 'Overview'],
  ['/dashboard/keys', 'Keys'],
  ['/dashboard/usage', 'Usage'],
  ['/dashboard/billing', 'Billing'],
  ['/dashboard/terms', 'Terms'],
  ['/dashboard/webhooks', 'Webhooks'],
] as const;

export function DashNav(props: { current: string }) {
  return (
    <nav aria-label="Dashboard" class="subnav">
      <ul>
        {SECTIONS.map(([href, label]) => (
          <li>
            {href === props.current ? (
              <a href={href} aria-current="page">
                {label}
              </a>
            ) : (
              <a href={href}>{label}</a>
            )}
          </li>
        ))}
      </ul>
    </nav>
  );
}
