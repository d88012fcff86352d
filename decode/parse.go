package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// Parse reads one JSON answer into the generic form the package reads
// (objects as map[string]any, numbers as json.Number). Memory is bounded
// by what is kept: an array longer than maxItems keeps its first and last
// maxItems/2 items (the newest rows, whichever order they come in), the
// middle read and dropped. maxItems <= 0 keeps everything.
func Parse(body []byte, maxItems int) (any, error) {
	if v, ok := parseWhole(body, maxItems); ok {
		return v, nil
	}
	v, _, err := parseTokens(body, maxItems)
	return v, err
}

// parser reads one answer token by token, keeping what Parse keeps.
type parser struct {
	dec     *json.Decoder
	max     int
	dropped int
}

// parseTokens is Parse token by token, dropping the middle of long arrays
// as it reads them; it also says how many items it dropped.
func parseTokens(body []byte, maxItems int) (any, int, error) {
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

// parseWhole is Parse of an answer with no array longer than maxItems,
// read as one value: without the garbage of reading token by token
// (encoding/json makes an error value per scalar token). ok is false when
// an array may be longer or the answer is not one JSON value: parseTokens
// reads it then, and says why.
func parseWhole(body []byte, maxItems int) (v any, ok bool) {
	if maxItems > 0 && widestArray(body) > maxItems {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if len(bytes.TrimLeft(body[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, false // data after the value
	}
	return v, true
}

// widestArray is at least the item count of the longest array of a JSON
// answer (its commas plus one); math.MaxInt when it cannot say (nested
// too deep, brackets that do not pair).
func widestArray(body []byte) int {
	var open [64]int // per bracket open: its commas so far, -1 for an object
	depth, widest := 0, 0
	inString := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped byte, a quote or a backslash among them
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '[', '{':
			if depth == len(open) {
				return math.MaxInt
			}
			open[depth] = 0
			if c == '{' {
				open[depth] = -1
			}
			depth++
		case ']', '}':
			if depth == 0 {
				return math.MaxInt
			}
			depth--
			if open[depth] >= 0 {
				widest = max(widest, open[depth]+1)
			}
		case ',':
			if depth > 0 && open[depth-1] >= 0 {
				open[depth-1]++
			}
		}
	}
	return widest
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
	return slices.Concat(head, tail[start:], tail[:start]), nil
}
