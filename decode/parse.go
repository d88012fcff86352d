package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Parse reads one JSON answer into the generic form the rest of the
// package reads (objects as map[string]any, numbers as json.Number), once
// per answer. Memory is bounded by what is kept, not by what was sent: an
// array longer than maxItems keeps its first and its last maxItems/2
// items (the newest rows, whichever order the upstream sends them in), and
// the items between are read and dropped. An answer asked for with a
// small limit that holds a hundred thousand rows costs what a thousand
// would. maxItems <= 0 keeps everything.
func Parse(body []byte, maxItems int) (any, error) {
	v, _, err := ParseStats(body, maxItems)
	return v, err
}

// parser reads one answer token by token, keeping what Parse keeps.
type parser struct {
	dec     *json.Decoder
	max     int
	dropped int
}

// ParseStats is Parse that also says how many array items were dropped.
func ParseStats(body []byte, maxItems int) (any, int, error) {
	p := &parser{dec: json.NewDecoder(bytes.NewReader(body)), max: maxItems}
	p.dec.UseNumber()
	v, err := p.value()
	if err != nil {
		return nil, 0, fmt.Errorf("invalid JSON: %s", ShortJSONError(err))
	}
	if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, 0, errors.New("invalid JSON: data after the end of the answer")
	}
	return v, p.dropped, nil
}

func (p *parser) value() (any, error) {
	tok, err := p.dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return p.object()
		case '[':
			return p.array()
		}
		return nil, fmt.Errorf("unexpected %q", rune(t))
	}
	return tok, nil // string, json.Number, bool or nil
}

func (p *parser) object() (map[string]any, error) {
	obj := map[string]any{}
	for p.dec.More() {
		tok, err := p.dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("object key is not a string")
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		obj[key] = v
	}
	if _, err := p.dec.Token(); err != nil { // '}'
		return nil, err
	}
	return obj, nil
}

func (p *parser) array() ([]any, error) {
	var head, tail []any
	half := p.max / 2
	n := 0
	for p.dec.More() {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		switch {
		case p.max <= 0 || len(head) < max(half, p.max-half) && n == len(head):
			head = append(head, v)
		case half == 0:
			p.dropped++
		case len(tail) < half:
			tail = append(tail, v)
		default:
			// A ring of the last half items: the oldest of them goes.
			tail[(n-len(head))%half] = v
			p.dropped++
		}
		n++
	}
	if _, err := p.dec.Token(); err != nil { // ']'
		return nil, err
	}
	if len(tail) == 0 {
		if head == nil {
			head = []any{}
		}
		return head, nil
	}
	// Put the ring back in order: its oldest item is at the next slot.
	start := (n - len(head)) % half
	if len(tail) < half {
		start = 0
	}
	out := make([]any, 0, len(head)+len(tail))
	out = append(out, head...)
	out = append(out, tail[start:]...)
	return append(out, tail[:start]...), nil
}
