// The hold of a click or a key that may open a tab (noNewTabJS in
// element.go) begins here, in browsergate's isolated world, as each
// document begins: a capturing listener on the window, added before any of
// the page's scripts runs, so that no listener of the page's comes before
// it to stop the event. It does nothing until the hold is on (the
// function noNewTabJS puts on the world's window, which the page's world
// cannot see).
//
// One part stands at all times: a click or auxclick a script made (not
// trusted) with Control, Meta or Shift held, or of the middle button,
// that reaches a link or a form's control has its default cancelled. Such
// a click opens a tab of the browser's own making; the agent's own are
// refused or held at the gate, the user's own (trusted) are theirs, and a
// page's synthesized one (dispatched from the handler of the agent's plain
// click or key) is stopped here. What this cannot see (a detached link, a
// closed shadow root, an event made not cancelable, a document whose
// listeners document.open() erased), the target guard closes as the
// browser makes its tab (guard_newtabs.go).
{
  const key = Symbol.for('browsergate.noNewTab');
  const HTML = 'http://www.w3.org/1999/xhtml', SVG = 'http://www.w3.org/2000/svg';
  const opens = n => n instanceof Element && (n.namespaceURI === SVG ? n.localName === 'a' :
    n.namespaceURI === HTML && ['a', 'area', 'button', 'input'].includes(n.localName));
  const standing = e => {
    if (!e.isTrusted && (e.ctrlKey || e.metaKey || e.shiftKey || e.button === 1) && e.composedPath().some(opens)) e.preventDefault();
  };
  const hold = e => { const f = globalThis[key]; if (f) f(e); };
  for (const t of ['click', 'auxclick']) addEventListener(t, standing, true);
  for (const t of ['click', 'auxclick', 'mouseup', 'submit']) addEventListener(t, hold, true);
  globalThis[Symbol.for('browsergate.noNewTab.early')] = true;
}
