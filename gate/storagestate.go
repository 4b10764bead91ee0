package gate

import (
	"github.com/browsergate/browsergate/evidence"
	"github.com/browsergate/browsergate/internal/pagetext"
)

// StorageStateAllowed judges a state the session loads by itself (the
// manifest's autoload_state) as a load_storage_state of it is judged
// (q.Facts.StorageState): nil when it may be loaded.
func StorageStateAllowed(q *Question) *DenyError { return storageStateLeads(q) }

// storageStateLeads judges a state command: a load only when every site
// the state holds a cookie or local storage for is inside the scope
// (fail closed: one outside refuses the whole file, so nothing of it is
// applied), and a file holding a secret's value only when every site is
// on that secret's domains.
func storageStateLeads(q *Question) *DenyError {
	st := q.Facts.StorageState
	if st == nil {
		return Deny(evidence.StageObserve, "state", "the saved state was not observed")
	}
	if st.Err != nil {
		return Deny(evidence.StageArgs, "state", "%v", st.Err)
	}
	for _, site := range st.Sites {
		if sv := q.check(site); !sv.Allowed {
			return Deny(evidence.StageScope, sv.Rule,
				"state %s holds cookies or local storage for %s, outside the scope (%s): nothing of it was loaded",
				pagetext.Value(st.File.Name), pagetext.Value(site), sv.Reason)
		}
		if len(st.Holds) > 0 {
			if err := q.Secrets.mayAttach(st.File.Name, st.Holds, site); err != nil {
				return Deny(evidence.StageSecrets, "secret domains", "%v: nothing of the state was loaded", err)
			}
		}
	}
	return nil
}
