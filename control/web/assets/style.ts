/**
 * The site's one stylesheet, served from /assets/ with a content hash in its name (cached for a year).
 * A small design system, no framework: tokens (type scale, spacing, radius, colours) on :root, light and dark via
 * `prefers-color-scheme`, visible focus rings, and a few components (cards with an avatar and a category mark,
 * buttons, tables, notices, form fields with their errors). A readable single column on a 375 px phone.
 * Contrast: every text colour meets WCAG AA (4.5:1) on its background in both schemes.
 */
const HUES = [212, 262, 330, 12, 32, 48, 88, 140, 168, 190, 236, 292];

/** `.hue-N`: the avatar and category-mark colours, one per hue, readable in both schemes. */
const hueClasses = HUES.map(
  (h, i) =>
    `.hue-${i}{--h-bg:hsl(${h} 70% 92%);--h-fg:hsl(${h} 60% 28%)}@media (prefers-color-scheme:dark){.hue-${i}{--h-bg:hsl(${h} 35% 24%);--h-fg:hsl(${h} 80% 86%)}}`,
).join('\n');

export const STYLE_CSS = `
:root{
--step--1:.875rem;--step-0:1rem;--step-1:1.2rem;--step-2:1.44rem;--step-3:1.85rem;
--s1:.25rem;--s2:.5rem;--s3:.75rem;--s4:1rem;--s5:1.5rem;--s6:2rem;--radius:10px;
--fg:#1b1f24;--muted:#57606a;--bg:#fff;--surface:#f6f8fa;--line:#d0d7de;--input:#8c959f;
--accent:#0b5cad;--accent-fg:#fff;--accent-bg:#eaf2fb;--accent-line:#b6d4f2;
--ok:#116329;--ok-bg:#dafbe1;--ok-line:#9ad3a9;--warn:#7a5a00;--warn-bg:#fff3cd;--warn-line:#c90;
--err:#a40e26;--err-bg:#ffebe9;--err-line:#ffc1c0;--shadow:0 1px 2px rgb(31 35 40 / .08);
color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{
--fg:#e6edf3;--muted:#9da7b3;--bg:#0d1117;--surface:#161b22;--line:#30363d;--input:#6e7681;
--accent:#4493f8;--accent-fg:#0d1117;--accent-bg:#10243e;--accent-line:#1f4a7a;
--ok:#56d364;--ok-bg:#0f2a18;--ok-line:#2e6b3a;--warn:#e3b341;--warn-bg:#2b2111;--warn-line:#9e6a03;
--err:#ff7b72;--err-bg:#2d1214;--err-line:#8e1519;--shadow:none}}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{overflow-wrap:break-word;margin:0;font:var(--step-0)/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent);text-underline-offset:.15em}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px;border-radius:4px}
.skip{position:absolute;left:-999px}.skip:focus{left:.5rem;top:.5rem;background:var(--bg);padding:.5rem;z-index:2}
header.site{border-bottom:1px solid var(--line);padding:var(--s2) var(--s4);display:flex;flex-wrap:wrap;align-items:center;gap:var(--s1) var(--s4);background:var(--surface)}
header.site .brand{font-weight:800;text-decoration:none;color:var(--fg);font-size:var(--step-1);display:flex;align-items:center;gap:.4rem}
header.site .brand::before{content:"";width:1.1rem;height:1.1rem;border-radius:5px;background:linear-gradient(135deg,var(--accent),#8250df)}
header.site nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:var(--s1) var(--s4)}
header.site nav a{text-decoration:none;font-weight:600}
header.site .who{margin-left:auto;display:flex;align-items:center;gap:var(--s2);font-size:var(--step--1);color:var(--muted)}
main{max-width:68rem;margin:0 auto;padding:var(--s4)}
footer.site{max-width:68rem;margin:var(--s6) auto var(--s4);padding:0 var(--s4);color:var(--muted);font-size:var(--step--1)}
h1{font-size:var(--step-3);line-height:1.2;margin:var(--s2) 0 var(--s4);letter-spacing:-.01em}
h2{font-size:var(--step-2);margin:var(--s6) 0 var(--s3);line-height:1.25}h3{font-size:var(--step-1);line-height:1.3}
.lead{font-size:var(--step-1);color:var(--muted);max-width:44rem}
form.stack{display:grid;gap:var(--s3);max-width:30rem}
form.inline{display:inline}
label{display:grid;gap:.2rem;font-weight:600}
label.check{display:flex;gap:.5rem;align-items:center;font-weight:400}
.field{display:grid;gap:.2rem}.field-error{color:var(--err);margin:0;font-size:var(--step--1)}.field-error::before{content:"⚠ "}
input,select,textarea{font:inherit;padding:.5rem .6rem;border:1px solid var(--input);border-radius:6px;width:100%;background:var(--bg);color:var(--fg)}
[aria-invalid=true]{border-color:var(--err);border-width:2px}
input[type=checkbox],input[type=radio]{width:auto}
button,.button{font:inherit;font-weight:600;padding:.5rem 1rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:var(--accent-fg);cursor:pointer;text-decoration:none;display:inline-block;line-height:1.4}
button:hover,.button:hover{filter:brightness(1.08)}
button.secondary,.button.secondary{background:transparent;color:var(--accent)}
button.link{background:none;border:0;color:var(--accent);padding:0;text-decoration:underline;font-weight:400}
button.danger,.button.danger{background:var(--err);border-color:var(--err);color:var(--bg)}
.hint{color:var(--muted);font-size:var(--step--1);font-weight:400}
.notice{padding:var(--s3) var(--s4);border-radius:var(--radius);background:var(--accent-bg);border:1px solid var(--accent-line)}
.notice.error{background:var(--err-bg);border-color:var(--err-line);color:var(--err)}
.notice.ok{border-color:var(--ok-line);background:var(--ok-bg);color:var(--ok)}
.banner{padding:var(--s3) var(--s4);background:var(--warn-bg);border:2px solid var(--warn-line);color:var(--warn);border-radius:var(--radius)}
.secret{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all;background:var(--surface);padding:.5rem;border:1px dashed var(--line)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
pre{background:var(--surface);border:1px solid var(--line);padding:var(--s3);overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere;border-radius:var(--radius);max-width:100%}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:.45rem .55rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600;color:var(--muted);font-size:var(--step--1);text-transform:uppercase;letter-spacing:.03em}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.cards,.ways{display:grid;gap:var(--s4);grid-template-columns:repeat(auto-fill,minmax(17rem,1fr));padding:0;list-style:none;margin:var(--s3) 0}
.card{border:1px solid var(--line);border-radius:var(--radius);padding:var(--s4);background:var(--bg);box-shadow:var(--shadow);min-width:0}
.card h3{margin:0 0 .15rem;overflow-wrap:anywhere}.card-head>*{min-width:0}.card p{margin:.4rem 0}
.card-head{display:flex;gap:var(--s3);align-items:center}.card-head p{margin:0}
.avatar{flex:none;width:2.5rem;height:2.5rem;border-radius:9px;display:grid;place-items:center;font-weight:800;font-size:.95rem;background:var(--h-bg);color:var(--h-fg)}
.cat{display:inline-block;border-radius:999px;padding:0 .55rem;font-size:var(--step--1);font-weight:600;text-decoration:none;background:var(--h-bg);color:var(--h-fg)}
.cat .count{opacity:.8;font-weight:400;margin-left:.2rem}
.chips{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:var(--s2)}.chips .cat{padding:.2rem .7rem;font-size:var(--step-0)}
.meta{color:var(--muted);font-size:var(--step--1)}
.big{font-size:var(--step-3);font-weight:700}
.tag{display:inline-block;border:1px solid var(--line);border-radius:999px;padding:0 .5rem;font-size:.8rem;color:var(--muted)}
.state-live{color:var(--ok)}.state-draft{color:var(--warn)}
.hero-search{display:flex;gap:var(--s2);max-width:40rem;margin:var(--s4) 0}.hero-search input{font-size:var(--step-1)}
.stats{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:var(--s2) var(--s5);color:var(--muted)}.stats strong{color:var(--fg);font-size:var(--step-2);margin-right:.2rem}
.ways pre{font-size:.8rem}
.checklist{list-style:none;padding:0;display:grid;gap:var(--s2)}.checklist li{display:flex;gap:var(--s2);align-items:baseline}
.checklist .mark{flex:none;width:1.4rem;height:1.4rem;border-radius:50%;border:2px solid var(--line);display:inline-grid;place-items:center;font-size:.8rem;font-weight:800}
.checklist .done .mark{background:var(--ok);border-color:var(--ok);color:var(--bg)}.checklist .done .what{color:var(--muted);text-decoration:line-through}
.empty{border:1px dashed var(--line);border-radius:var(--radius);padding:var(--s4);color:var(--muted);text-align:center}
.filters{display:grid;gap:var(--s2);grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));align-items:end;margin-bottom:var(--s4)}
.pager{display:flex;gap:var(--s4);margin:var(--s4) 0}
.chart{max-width:100%;overflow-x:auto;margin:var(--s4) 0}.chart svg{max-width:100%;height:auto;background:#fff;border-radius:var(--radius)}.chart.empty p{border:1px dashed var(--line);border-radius:var(--radius);padding:var(--s5);text-align:center;color:var(--muted);margin:0}
.prose{max-width:44rem}.prose img{max-width:100%}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;min-width:0}
details{margin:.5rem 0}summary{cursor:pointer;font-weight:600}
.subnav ul{list-style:none;padding:0;margin:0 0 var(--s4);display:flex;flex-wrap:wrap;gap:var(--s1) var(--s4);border-bottom:1px solid var(--line);padding-bottom:var(--s2)}.subnav a[aria-current]{font-weight:700;text-decoration:none;color:var(--fg)}
.row{display:flex;flex-wrap:wrap;gap:var(--s2);align-items:end}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
${hueClasses}
@media (min-width:48rem){main{padding:var(--s5) var(--s6)}footer.site{padding:0 var(--s6)}h1{font-size:2.1rem}}
`;

/** The favicon: the brand mark (a rounded square in the accent gradient with an "s"), as SVG. */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#0b5cad"/><stop offset="1" stop-color="#8250df"/></linearGradient></defs><rect width="32" height="32" rx="8" fill="url(#g)"/><text x="16" y="23" font-family="system-ui,sans-serif" font-size="20" font-weight="800" fill="#fff" text-anchor="middle">s</text></svg>`;
