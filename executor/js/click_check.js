// Right before each mouse event of a click, on the node the click would
// land on (this): what the click would do from there must be within what
// the gate judged of the element (want: {urls, submits}), so that a page
// that changes the element, or a click that lands on something the gate
// did not see, is caught.
function(want) {
  const r = RESOLVE(this, 'click');
  const unjudged = r.urls.filter(u => !want.urls.includes(u));
  if ((r.submits && !want.submits) || unjudged.length || r.embeds) {
    throw new Error('the element changed after the gate decided: a click on it now ' +
      (r.embeds ? 'lands in an embedded document' : r.submits && !want.submits ? 'submits a form' : 'leads to ' + unjudged.join(', ')) +
      ', which the gate did not judge');
  }
  return true;
}
