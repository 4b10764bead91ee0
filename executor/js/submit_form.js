// Submits the form of the element (this), in the same task that checks it
// still posts where the gate judged it would (want), with the submitter
// resolve.js chose, through requestSubmit so that validation and submit
// handlers run as for a user.
function(want) {
  const r = RESOLVE(this, 'submit');
  if (!r.form) throw new Error('the element is not in a form');
  if (r.url !== want) throw new Error('the form now posts to ' + r.url + ', not to ' + want + ' where the gate judged it');
  HTMLFormElement.prototype.requestSubmit.call(r.form, r.submitter || undefined);
  return r.url;
}
