package executor

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chromedp/chromedp"
)

// fill_form: several fields typed into in one call, each exactly as
// type_text types into one. The gate judges every field before any is
// filled (gate.ObserveFields), and the secrets' domains are checked again
// for every field before the first is typed into.

// formFields are fill_form's fields as type_text's arguments: a ref or a
// selector, and the text.
func formFields(args map[string]any) []map[string]any {
	list, _ := args["fields"].([]any)
	out := make([]map[string]any, 0, len(list))
	for _, item := range list {
		if rec, ok := item.(map[string]any); ok {
			out = append(out, rec)
		}
	}
	return out
}

// observeFields reads every field fill_form types into, and, when any
// text holds a secret, the unguarded pages beside those fields' pages.
func (s *session) observeFields(ctx context.Context, args map[string]any, f *facts) {
	for _, field := range formFields(args) {
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

func actFillForm(ctx context.Context, s *session, args map[string]any, f *facts) (output, error) {
	fields := formFields(args)
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
		out, err := s.typeText(ctx, field)
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
