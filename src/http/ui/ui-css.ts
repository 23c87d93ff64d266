/** The memory view's one stylesheet, served at `/ui/static/ui.css`: light and dark, readable on a phone. */
export const UI_CSS = `:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1c1f23; --muted: #5c6670; --line: #d8dde3; --card: #f5f7f9; --link: #0b57d0;
  --instant: #d99a00; --runbook: #2f7de1; --investigation: #7a4fd1; --degraded: #c0392b; --silenced: #7f8c8d;
  --ok: #1e8e3e; --warn: #b26a00; --bad: #c0392b;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #111417; --fg: #e6e9ec; --muted: #9aa5b1; --line: #2c333a; --card: #1a1f24; --link: #8ab4f8;
    --instant: #f2b632; --runbook: #5ea1ff; --investigation: #a583ff; --degraded: #ff6b5e; --silenced: #a3b0b5;
    --ok: #5cd37a; --warn: #f0a64a; --bad: #ff6b5e;
  }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 16px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
header.top { display: flex; flex-wrap: wrap; gap: .25rem 1rem; align-items: baseline; padding: .6rem 1rem; border-bottom: 1px solid var(--line); }
header.top .brand { font-weight: 700; }
header.top nav a { margin-right: .8rem; }
header.top .who { margin-left: auto; color: var(--muted); font-size: .85rem; }
main { padding: 1rem; max-width: 72rem; margin: 0 auto; }
a { color: var(--link); }
a[aria-current="page"] { font-weight: 700; text-decoration: none; }
h1 { font-size: 1.35rem; margin: .2rem 0 .8rem; }
h2 { font-size: 1.1rem; margin: 1.4rem 0 .5rem; }
p.note, .muted { color: var(--muted); font-size: .9rem; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(10.5rem, 1fr)); gap: .6rem; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .6rem .75rem; }
.card .label { color: var(--muted); font-size: .8rem; }
.card .value { font-size: 1.4rem; font-weight: 650; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; width: 100%; font-size: .9rem; }
th, td { text-align: left; padding: .35rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: var(--card); border: 1px solid var(--line); border-radius: .4rem; padding: .75rem; overflow-x: auto; white-space: pre-wrap; word-break: break-word; font-size: .85rem; }
code { font-size: .85rem; }
/* Trigger keys and entry ids are long unbroken words: break them rather than scroll the page sideways on a phone. */
code, td, main a { overflow-wrap: anywhere; }
form.filters { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .5rem 0 1rem; }
form.filters label { display: flex; flex-direction: column; font-size: .8rem; color: var(--muted); }
input, select, button { font: inherit; padding: .35rem .5rem; border: 1px solid var(--line); border-radius: .35rem; background: var(--bg); color: var(--fg); }
button { cursor: pointer; background: var(--card); }
.flag { display: inline-block; font-size: .75rem; padding: 0 .4rem; margin: 0 .2rem .2rem 0; border-radius: .8rem; border: 1px solid var(--line); white-space: nowrap; }
.flag.bad { border-color: var(--bad); color: var(--bad); }
.flag.warn { border-color: var(--warn); color: var(--warn); }
.pager { display: flex; gap: 1rem; margin: .8rem 0; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3rem 1rem; font-size: .85rem; margin: .3rem 0; }
svg.chart { max-width: 100%; height: auto; display: block; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(16rem, 1fr)); gap: .6rem 1rem; }
figure.chart { margin: 0; min-width: 0; }
figure.chart figcaption { font-size: .85rem; margin-bottom: .2rem; }
svg .axis { stroke: var(--line); }
svg .tick { fill: var(--muted); font-size: 9px; }
.k-instant { fill: var(--instant); } .k-runbook { fill: var(--runbook); } .k-investigation { fill: var(--investigation); }
.k-degraded { fill: var(--degraded); } .k-silenced { fill: var(--silenced); }
.k-up { fill: var(--ok); } .k-down { fill: var(--bad); }
.trace { background: var(--card); border: 1px solid var(--line); border-radius: .5rem; padding: .6rem .8rem; }
ol.timeline { padding-left: 1.2rem; } ol.timeline li { margin: .15rem 0; }
.login { max-width: 24rem; margin: 3rem auto; }
.login input { width: 100%; margin: .4rem 0 .8rem; }
@media (max-width: 40rem) { body { font-size: 15px; } main { padding: .6rem; } th, td { padding: .3rem .35rem; } .hide-narrow { display: none; } }
`;
