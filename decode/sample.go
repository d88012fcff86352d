package decode

import (
	"encoding/json"
	"errors"
	"strconv"

	"github.com/onchain-exporter/onchain_exporter/config"
)

// savedSample is a Sample in a state file, so that a restart serves it
// without a call; the value as text so that any float survives.
type savedSample struct {
	Field  config.Field `json:"field"`
	Names  []string     `json:"names,omitempty"`
	Values []string     `json:"values,omitempty"`
	Value  string       `json:"value"`
}

func (s Sample) MarshalJSON() ([]byte, error) {
	return json.Marshal(savedSample{Field: *s.Field, Names: s.ExtraNames(), Values: s.ExtraValues(),
		Value: strconv.FormatFloat(s.Value, 'g', -1, 64)})
}

func (s *Sample) UnmarshalJSON(data []byte) error {
	var v savedSample
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	if len(v.Names) != len(v.Values) {
		return errors.New("a sample has unequal label names and values")
	}
	x, err := strconv.ParseFloat(v.Value, 64)
	if err != nil {
		return errors.New("a sample's value is not a number")
	}
	*s = Sample{Field: &v.Field, Extra: ExtraOf(v.Names, v.Values), Value: x}
	return nil
}
