// Submits the element's form (or the element, if it is a form) with
// requestSubmit, so that validation and submit handlers run as for a user.
// Returns where the form posts.
function() {
  const f = this.tagName === 'FORM' ? this : (this.form || (this.closest && this.closest('form')));
  if (!f) throw new Error('the element is not in a form');
  const btn = (this.type === 'submit') ? this : undefined;
  f.requestSubmit(btn);
  return f.action || location.href;
}
