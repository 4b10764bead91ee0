package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"

	"github.com/browsergate/browsergate/gate"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// fill_form: several fields filled in one call, each exactly as the
// single command it stands for fills it: text typed as type_text types,
// an option chosen as select_option chooses (value: by value, else by
// label), a checkbox or radio clicked as click clicks, only when its
// state differs from the one asked. The gate judges every field before
// any is filled (gate.ObserveFields), and the secrets' domains are checked
// again for every field before the first is typed into.

// fillField marks the arguments of select_option made of a fill_form
// field: its value names the option by value, else by label
// (optionChoice). No argument of a call can have this name.
const fillField = "\x00fill_form"

// fieldArgs are the arguments of the single command a field of fill_form
// stands for.
func fieldArgs(field map[string]any) map[string]any {
	args := gate.SingleArgs(field, false)
	if gate.FieldKind(field) == gate.FieldOption {
		args[fillField] = true
	}
	return args
}

// observeFields reads every field fill_form fills: a text field as
// type_text's, an option as select_option's, a checkbox or radio as
// click's element; and, when any text holds a secret, the unguarded pages
// beside those fields' pages.
func (s *session) observeFields(ctx context.Context, args map[string]any, f *facts) {
	for _, field := range gate.FormFields(args) {
		switch gate.FieldKind(field) {
		case gate.FieldOption:
			f.Fields = append(f.Fields, s.observeSelect(ctx, fieldArgs(field)))
			continue
		case gate.FieldChecked:
			f.Fields = append(f.Fields, s.observeCheck(ctx, field))
			continue
		}
		el := s.observeField(ctx, field)
		f.Fields = append(f.Fields, el)
		if text, _ := field["text"].(string); len(s.secrets.Load().Placeholders(text)) == 0 || el.Err != nil {
			continue
		}
		if everyTarget, err := chromedp.Targets(ctx); err != nil {
			f.BesideErr = err
		} else {
			f.Beside = append(f.Beside, s.unguardedBeside(everyTarget, el.Field.URL)...)
		}
	}
}

// checkState is a checkbox's or radio's state (js/check_state.js).
type checkState struct {
	Checked, Radio bool
	Refused        string
}

// checkable finds the checkbox or radio a field names, and its state. A
// radio button is unchecked only by checking another of its group: a
// field asking that is an error.
func (s *session) checkable(ctx context.Context, field map[string]any) (element, checkState, error) {
	el, _, err := s.target(ctx, field)
	if err != nil {
		return el, checkState{}, err
	}
	var st checkState
	if err := el.call(ctx, checkStateJS, &st); err != nil {
		return el, st, err
	}
	want, _ := field["checked"].(bool)
	switch {
	case st.Refused != "":
		return el, st, fmt.Errorf("%s: %s", el.label, st.Refused)
	case st.Radio && !want:
		return el, st, fmt.Errorf("%s is a radio button: it is unchecked only by checking another of its group", el.label)
	}
	return el, st, nil
}

// observeCheck finds the checkbox or radio a field sets, and where a click
// on it leads: the gate judges that click whether or not the state asked
// is the one it has now, so the act may click whatever the state then.
func (s *session) observeCheck(ctx context.Context, field map[string]any) *gate.Element {
	el, _, err := s.checkable(ctx, field)
	ef := &gate.Element{Named: true, Label: el.label, Err: err}
	if err == nil {
		ef.DestErr = el.call(ctx, destinationJS, &ef.Dest, "click")
	}
	return ef
}

// setChecked clicks the checkbox or radio a field names when its state is
// not the one asked, then checks that the click set it.
func (s *session) setChecked(ctx context.Context, field map[string]any, judged *gate.Element) (output, error) {
	el, st, err := s.checkable(ctx, field)
	if err != nil {
		return output{}, err
	}
	want, _ := field["checked"].(bool)
	state := map[bool]string{true: "checked", false: "unchecked"}[want]
	if st.Checked == want {
		return output{Text: pagetext.Value(el.label) + " was already " + state}, nil
	}
	var dest gate.Destination
	if judged != nil {
		dest = judged.Dest
	}
	if err := s.click(ctx, el, dest); err != nil {
		return output{}, err
	}
	if _, st, err = s.checkable(ctx, field); err == nil && st.Checked != want {
		err = fmt.Errorf("%s: the click did not leave it %s (the page's handlers may have changed it back)", el.label, state)
	}
	if err != nil {
		return output{}, err
	}
	return output{Text: "clicked " + pagetext.Value(el.label) + ", now " + state}, nil
}

func actFillForm(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	fields := gate.FormFields(args)
	// The gate checked the secrets' domains; the page may have moved
	// since, so they are checked again, for every field, before any is
	// typed into.
	for i, field := range fields {
		if text, _ := field["text"].(string); len(s.secrets.Load().Placeholders(text)) > 0 {
			if err := s.secrets.Load().MayType(text, s.observeField(ctx, field)); err != nil {
				return output{}, fmt.Errorf("field %d: %w; no field was filled", i+1, err)
			}
		}
	}
	var done []string
	for i, field := range fields {
		var judged *gate.Element
		if f != nil && i < len(f.Fields) {
			judged = f.Fields[i]
		}
		out, err := s.fillField(ctx, field, judged)
		if err != nil {
			if len(done) > 0 {
				err = fmt.Errorf("field %d: %w (fields 1 to %d were filled)", i+1, err, i)
			} else {
				err = fmt.Errorf("field %d: %w; no field was filled", i+1, err)
			}
			return output{Text: strings.Join(done, "; ")}, err
		}
		done = append(done, out.Text)
	}
	if len(done) == 0 {
		return output{}, errors.New("no fields to fill")
	}
	return output{Text: fmt.Sprintf("filled %d fields: %s", len(done), strings.Join(done, "; "))}, nil
}

// fillField fills one field as the single command it stands for, on what
// the gate judged of it.
func (s *session) fillField(ctx context.Context, field map[string]any, judged *gate.Element) (output, error) {
	switch gate.FieldKind(field) {
	case gate.FieldOption:
		return actSelectOption(ctx, s, fieldArgs(field), &facts{Element: judged})
	case gate.FieldChecked:
		return s.setChecked(ctx, field, judged)
	}
	return s.typeText(ctx, field)
}
