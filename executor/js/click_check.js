// Right before the mouse click: the element (this) must still lead where
// the gate judged it would (want: {url, submits}), so that a page that
// changes the element after the decision is caught.
function(want) {
  const r = RESOLVE(this, 'click');
  if (r.url !== want.url || r.submits !== want.submits) {
    throw new Error('the element changed after the gate decided: it now leads to ' + (r.url || 'nowhere') +
      (r.submits ? ' (submitting a form)' : '') + ', not to ' + (want.url || 'nowhere') + (want.submits ? ' (submitting a form)' : ''));
  }
  return true;
}
