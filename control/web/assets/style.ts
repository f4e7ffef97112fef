/**
 * The site's one stylesheet, served from /assets/ with a content hash in its name (cached for a year).
 * Plain CSS, no framework: a readable single column on a 375 px phone, a little wider on desktops.
 */
export const STYLE_CSS = `
:root{--fg:#1b1f24;--muted:#57606a;--bg:#fff;--line:#d0d7de;--accent:#0b5cad;--accent-bg:#eaf2fb;--ok:#116329;--warn-bg:#fff3cd;--warn:#7a5a00;--err:#a40e26;--err-bg:#ffebe9;color-scheme:light}
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{overflow-wrap:break-word;margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,textarea:focus-visible,summary:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:.5rem;top:.5rem;background:var(--bg);padding:.5rem;z-index:2}
header.site{border-bottom:1px solid var(--line);padding:.5rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.25rem 1rem}
header.site .brand{font-weight:700;text-decoration:none;color:var(--fg);font-size:1.15rem}
header.site nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:.25rem .9rem}
header.site .who{margin-left:auto;display:flex;align-items:center;gap:.5rem;font-size:.9rem;color:var(--muted)}
main{max-width:60rem;margin:0 auto;padding:1rem}
footer.site{max-width:60rem;margin:2rem auto 1rem;padding:0 1rem;color:var(--muted);font-size:.85rem}
h1{font-size:1.6rem;line-height:1.25;margin:.5rem 0 1rem}h2{font-size:1.25rem;margin:1.5rem 0 .5rem}h3{font-size:1.05rem}
form.stack{display:grid;gap:.75rem;max-width:28rem}
form.inline{display:inline}
label{display:grid;gap:.2rem;font-weight:600}
.field{display:grid;gap:.2rem}.field-error{color:var(--err);margin:0;font-size:.9rem}.field-error::before{content:"⚠ "}[aria-invalid=true]{border-color:var(--err);border-width:2px}
label.check{display:flex;gap:.5rem;align-items:center;font-weight:400}
input,select,textarea{font:inherit;padding:.45rem .55rem;border:1px solid #8c959f;border-radius:6px;width:100%;background:#fff;color:var(--fg)}
input[type=checkbox],input[type=radio]{width:auto}
button,.button{font:inherit;font-weight:600;padding:.45rem 1rem;border-radius:6px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,.button.secondary{background:#fff;color:var(--accent)}
button.link{background:none;border:0;color:var(--accent);padding:0;text-decoration:underline;font-weight:400}
button.danger{background:var(--err);border-color:var(--err)}
.hint{color:var(--muted);font-size:.9rem;font-weight:400}
.notice{padding:.6rem .8rem;border-radius:6px;background:var(--accent-bg);border:1px solid #b6d4f2}
.notice.error{background:var(--err-bg);border-color:#ffc1c0;color:var(--err)}
.notice.ok{border-color:#9ad3a9;background:#dafbe1;color:var(--ok)}
.banner{padding:.6rem .8rem;background:var(--warn-bg);border:2px solid #c90;color:#4d3800}
.secret{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all;background:#f6f8fa;padding:.5rem;border:1px dashed var(--line)}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.9em}
pre{background:#f6f8fa;padding:.75rem;overflow-x:auto;border-radius:6px;max-width:100%}
.table-wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.95rem}
th,td{text-align:left;padding:.4rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:grid;gap:.75rem;grid-template-columns:repeat(auto-fill,minmax(16rem,1fr));padding:0;list-style:none}
.card{border:1px solid var(--line);border-radius:8px;padding:.75rem}
.card h3{margin:0 0 .25rem}
.meta{color:var(--muted);font-size:.9rem}
.tag{display:inline-block;border:1px solid var(--line);border-radius:999px;padding:0 .5rem;font-size:.8rem;color:var(--muted)}
.state-live{color:var(--ok)}.state-draft{color:var(--warn)}
.filters{display:grid;gap:.5rem;grid-template-columns:repeat(auto-fit,minmax(10rem,1fr));align-items:end;margin-bottom:1rem}
.pager{display:flex;gap:1rem;margin:1rem 0}
.chart{max-width:100%;overflow-x:auto;margin:1rem 0}.chart svg{max-width:100%;height:auto}
.prose{max-width:44rem}.prose img{max-width:100%}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dl.facts dt{color:var(--muted)}dl.facts dd{margin:0;min-width:0}
details{margin:.5rem 0}summary{cursor:pointer;font-weight:600}
.subnav ul{list-style:none;padding:0;margin:0 0 1rem;display:flex;flex-wrap:wrap;gap:.25rem 1rem;border-bottom:1px solid var(--line);padding-bottom:.5rem}.subnav a[aria-current]{font-weight:700;text-decoration:none;color:var(--fg)}
.row{display:flex;flex-wrap:wrap;gap:.5rem;align-items:end}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
@media (min-width:48rem){main{padding:1.5rem 2rem}h1{font-size:1.9rem}}
`;
