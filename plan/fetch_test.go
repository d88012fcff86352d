package plan

import (
	"context"
	"errors"
	"io"
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

// fetch reads the plan of key at baseURL with one GET of Path, as the
// exporter's client does (upstream.Client.ReadPlan), for Answer.
func fetch(t *testing.T, baseURL, key string) Outcome {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, strings.TrimRight(baseURL, "/")+Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Answer(0, nil, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return Answer(resp.StatusCode, body, err)
}

// An answer of the plan's endpoint, by its status and body, is a plan or
// says why not, in one line.
func TestAnswerOfTheEndpoint(t *testing.T) {
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
		out := fetch(t, serve(t, c.status, c.body)+"/", testKey)
		if out.Kind != c.kind || !strings.HasPrefix(out.String(), c.line) {
			t.Errorf("%s: kind %d, %q", c.name, out.Kind, out.String())
		}
		if (out.Plan != nil) != (c.kind == Read) {
			t.Errorf("%s: plan %v with kind %d", c.name, out.Plan, out.Kind)
		}
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
