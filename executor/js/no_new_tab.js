// The hold of a click or a key that may open a tab (noNewTabJS in
// element.go) begins here, in browsergate's isolated world, as each
// document begins: a capturing listener on the window, added before any of
// the page's scripts runs, so that no listener of the page's comes before
// it to stop the event. It does nothing until the hold is on (the
// function noNewTabJS puts on the world's window, which the page's world
// cannot see).
{
  const key = Symbol.for('browsergate.noNewTab');
  const hold = e => { const f = globalThis[key]; if (f) f(e); };
  for (const t of ['click', 'auxclick', 'mouseup', 'submit']) addEventListener(t, hold, true);
  globalThis[Symbol.for('browsergate.noNewTab.early')] = true;
}
