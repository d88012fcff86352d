package plan

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const testKey = "k-3f9a-secret"

func serve(t *testing.T, status int, body string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != Path || r.Header.Get("Authorization") != "Bearer "+testKey {
			http.Error(w, "wrong call", http.StatusTeapot)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(s.Close)
	return s.URL
}

func TestFetch(t *testing.T) {
	for _, c := range []struct {
		name   string
		status int
		body   string
		kind   Kind
		line   string
	}{
		{"current", 200, current, Read, "plan PROFESSIONAL: 4 paths with windows, 2 always allowed, rate limit 1000 per hour"},
		{"older in an envelope", 200, older, Read, "plan PROFESSIONAL: 4 paths with windows, 2 always allowed, rate limit 1000 per hour"},
		{"no endpoint", 404, `{"status":{"code":404,"message":"not_found"}}`, NoEndpoint, "the upstream has no plan endpoint (404): working from the public discovery alone"},
		{"forbidden", 403, `{"status":{"code":403,"message":"forbidden"}}`, Basic, "the plan endpoint answered 403, read as the basic plan with nothing listed: working from the public discovery alone"},
		{"server error", 500, ``, Basic, "the plan endpoint answered 500, read as the basic plan"},
		{"envelope 403 in a 200", 200, `{"status":{"code":403,"message":"forbidden"}}`, Basic, "the plan endpoint answered 403"},
		{"bad key", 401, `{"status":{"code":401}}`, Rejected, "the plan endpoint refused the key (401)"},
		{"limited", 429, ``, Unknown, "the plan could not be read (status 429 Too Many Requests): working from the public discovery alone; the data calls decide"},
		{"not a plan", 200, `{"hello": 1}`, Unknown, "the plan could not be read (the plan answer holds none of plan, apiEndpoint, apiRateLimit: keys hello)"},
	} {
		out := Fetch(context.Background(), http.DefaultClient, serve(t, c.status, c.body)+"/", testKey)
		if out.Kind != c.kind || !strings.HasPrefix(out.String(), c.line) {
			t.Errorf("%s: kind %d, %q", c.name, out.Kind, out.String())
		}
		if (out.Plan != nil) != (c.kind == Read) {
			t.Errorf("%s: plan %v with kind %d", c.name, out.Plan, out.Kind)
		}
	}
}

// leaky is a Doer whose error echoes the key, as a proxy might.
type leaky struct{}

func (leaky) Do(r *http.Request) (*http.Response, error) {
	return nil, errors.New("proxy said: bad header " + r.Header.Get("Authorization"))
}

func TestFetchKeepsTheKeyOut(t *testing.T) {
	out := Fetch(context.Background(), leaky{}, "http://127.0.0.1:1", testKey)
	if out.Kind != Unknown || strings.Contains(out.String(), testKey) || !strings.Contains(out.String(), "<secret>") {
		t.Errorf("%q", out.String())
	}
	out = Fetch(context.Background(), http.DefaultClient, "http://127.0.0.1:1", testKey)
	if out.Kind != Unknown || out.Err == nil || strings.Contains(out.String(), testKey) {
		t.Errorf("a refused connection: %q", out.String())
	}
	out = Fetch(context.Background(), http.DefaultClient, "::bad", testKey)
	if out.Kind != Unknown || !strings.Contains(out.String(), `base URL "::bad"`) {
		t.Errorf("a bad base URL: %q", out.String())
	}
}

func TestAnswer(t *testing.T) {
	if out := Answer(403, nil, errors.New("forbidden")); out.Kind != Basic {
		t.Errorf("a 403 seen by another client: %v", out)
	}
	if out := Answer(0, nil, errors.New("timeout")); out.Kind != Unknown || !strings.Contains(out.String(), "timeout") {
		t.Errorf("no answer: %v", out)
	}
	if out := Answer(200, []byte(current), nil); out.Kind != Read || out.Plan.Name != "PROFESSIONAL" {
		t.Errorf("a plan: %v", out)
	}
}
