package toolclad

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// keyPath is a TOML key path; array elements are components like "[2]".
type keyPath []string

func (p keyPath) child(k string) keyPath {
	return append(p[:len(p):len(p)], k)
}

func (p keyPath) index(i int) keyPath {
	return p.child("[" + strconv.Itoa(i) + "]")
}

var bareKey = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// String renders the path as a dotted TOML key, quoting components that are
// not bare keys, so that the message can be pasted back into the file.
func (p keyPath) String() string {
	var b strings.Builder
	for i, k := range p {
		switch {
		case strings.HasPrefix(k, "[") && strings.HasSuffix(k, "]"):
			b.WriteString(k)
			continue
		case i > 0:
			b.WriteByte('.')
		}
		if bareKey.MatchString(k) {
			b.WriteString(k)
		} else {
			b.WriteString(strconv.Quote(k))
		}
	}
	return b.String()
}

func (p keyPath) mapKey() string { return strings.Join(p, "\x00") }

// positions maps every key path of a document to where its key first
// appears. go-toml/v2's decoder does not keep positions, so the document is
// walked a second time with its unstable parser, which does.
type positions struct {
	at map[string]unstable.Position
}

func indexPositions(doc []byte) *positions {
	ps := &positions{at: make(map[string]unstable.Position)}
	var p unstable.Parser
	p.Reset(doc)
	arrays := make(map[string]int)
	var prefix keyPath
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table:
			prefix = ps.keys(&p, nil, e.Key())
		case unstable.ArrayTable:
			path := ps.keys(&p, nil, e.Key())
			n := arrays[path.mapKey()]
			arrays[path.mapKey()] = n + 1
			prefix = path.index(n)
			if at, ok := ps.at[path.mapKey()]; ok {
				ps.set(prefix, at)
			}
		case unstable.KeyValue:
			ps.keyValue(&p, prefix, e)
		}
	}
	// A syntax error stops the walk; the decoder reports it.
	return ps
}

func (ps *positions) set(path keyPath, at unstable.Position) {
	if _, ok := ps.at[path.mapKey()]; !ok {
		ps.at[path.mapKey()] = at
	}
}

func (ps *positions) keys(p *unstable.Parser, prefix keyPath, it unstable.Iterator) keyPath {
	path := append(keyPath(nil), prefix...)
	for it.Next() {
		k := it.Node()
		path = append(path, string(k.Data))
		if k.Raw.Length > 0 {
			ps.set(path, p.Shape(k.Raw).Start)
		}
	}
	return path
}

func (ps *positions) keyValue(p *unstable.Parser, prefix keyPath, kv *unstable.Node) {
	path := ps.keys(p, prefix, kv.Key())
	ps.value(p, path, kv.Value())
}

func (ps *positions) value(p *unstable.Parser, path keyPath, v *unstable.Node) {
	switch v.Kind {
	case unstable.InlineTable:
		it := v.Children()
		for it.Next() {
			ps.keyValue(p, path, it.Node())
		}
	case unstable.Array:
		it := v.Children()
		for i := 0; it.Next(); i++ {
			el := it.Node()
			ep := path.index(i)
			if el.Raw.Length > 0 {
				ps.set(ep, p.Shape(el.Raw).Start)
			}
			ps.value(p, ep, el)
		}
	}
}

// of returns the position of path, or of its nearest ancestor that has one,
// or line 1 column 1.
func (ps *positions) of(path keyPath) (line, col int) {
	for n := len(path); n > 0; n-- {
		if at, ok := ps.at[path[:n].mapKey()]; ok {
			return at.Line, at.Column
		}
	}
	return 1, 1
}
