// Resolves true when the selector matches or the text appears in the page,
// false when ms pass first.
(sel, text, ms) => new Promise(resolve => {
  const ok = () => sel ? !!document.querySelector(sel) : (document.body && document.body.innerText.includes(text));
  if (ok()) return resolve(true);
  const obs = new MutationObserver(() => { if (ok()) { obs.disconnect(); clearTimeout(t); resolve(true); } });
  obs.observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
  const t = setTimeout(() => { obs.disconnect(); resolve(ok()); }, ms);
})
