/**
 * The wall's one style sheet: adopted by the custom element's shadow root and served as /embed/wall.css to
 * the HTML form. Every colour and size is a custom property a site can set on `sv-proof-wall` (or on the
 * iframe's page through its query-free defaults); see docs/proof.md#the-wall.
 */
export const WALL_CSS = `
:host { display: block; }
.sv-wall {
  --_fg: var(--sv-wall-fg, #1f2328);
  --_card: var(--sv-wall-card-bg, #ffffff);
  --_border: var(--sv-wall-border, #d0d7de);
  --_accent: var(--sv-wall-accent, #0a58ca);
  --_label-bg: var(--sv-wall-label-bg, #eef2f6);
  --_star: var(--sv-wall-star, #8a5a00);
  font: var(--sv-wall-font, 1rem/1.5 system-ui, -apple-system, "Segoe UI", sans-serif);
  color: var(--_fg);
  background: var(--sv-wall-bg, transparent);
}
.sv-items {
  list-style: none; margin: 0; padding: 0; display: grid; gap: var(--sv-wall-gap, 1rem);
  grid-template-columns: repeat(auto-fill, minmax(min(100%, var(--sv-wall-min-column, 16rem)), 1fr));
}
.sv-item {
  display: flex; flex-direction: column; gap: .5rem; padding: var(--sv-wall-padding, 1rem);
  background: var(--_card); border: 1px solid var(--_border); border-radius: var(--sv-wall-radius, .75rem);
  animation: sv-in .3s ease-out both;
}
.sv-figure { margin: 0; display: flex; flex-direction: column; gap: .5rem; }
.sv-quote { margin: 0; }
.sv-quote p { margin: 0 0 .25rem; overflow-wrap: anywhere; }
.sv-title { font-weight: 600; }
.sv-rating { margin: 0; color: var(--_star); letter-spacing: .1em; }
.sv-attribution { font-size: .875em; }
.sv-attribution span + span::before { content: ", "; }
.sv-by-name { font-weight: 600; }
.sv-media { display: block; max-width: 100%; height: auto; border-radius: calc(var(--sv-wall-radius, .75rem) / 2); }
.sv-labels { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem; }
.sv-label { font-size: .8125em; padding: .125rem .5rem; border-radius: 1rem; background: var(--_label-bg); }
.sv-verify { align-self: flex-start; margin-top: auto; color: var(--_accent); font-size: .875em; text-underline-offset: .2em; }
.sv-verify:focus-visible, .sv-media:focus-visible { outline: 3px solid var(--_accent); outline-offset: 2px; }
.sv-empty { margin: 0; }
body { margin: 0; padding: 1rem; font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #fff; }
.sv-visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.sv-verification { max-width: 40rem; }
.sv-verification a { color: #0a58ca; }
.sv-facts { display: grid; gap: .5rem; }
.sv-facts dt { font-weight: 600; }
.sv-facts dd { margin: 0; overflow-wrap: anywhere; }
@keyframes sv-in { from { opacity: 0; transform: translateY(.5rem); } to { opacity: 1; transform: none; } }
@media (prefers-reduced-motion: reduce) { .sv-item { animation: none; } }
`;
