// Resolves true when the selector matches or the text appears in the page
// (with gone: when the text is no longer in it), false when ms pass first.
(sel, text, ms, gone) => new Promise(resolve => {
  const has = () => !!(document.body && document.body.innerText.includes(text));
  const ok = () => sel ? !!document.querySelector(sel) : (gone ? !has() : has());
  if (ok()) return resolve(true);
  const obs = new MutationObserver(() => { if (ok()) { obs.disconnect(); clearTimeout(t); resolve(true); } });
  obs.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
  const t = setTimeout(() => { obs.disconnect(); resolve(ok()); }, ms);
})
