// Resolves once the document has seen no mutation for 20 ms, or after
// 500 ms at most (client-side rendering after a navigation or a click).
new Promise(resolve => {
  let timer;
  const done = () => { obs.disconnect(); clearTimeout(cap); resolve(true); };
  const obs = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(done, 20); });
  obs.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  timer = setTimeout(done, 20);
  const cap = setTimeout(done, 500);
})
