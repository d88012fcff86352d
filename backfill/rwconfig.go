package backfill

import (
	"errors"
	"fmt"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"time"

	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v2"
)

// RemoteWriteConfig is a remote-write target written as one entry of
// Prometheus' remote_write list: url, remote_timeout, headers, the HTTP
// client keys of prometheus/common (basic_auth, authorization, oauth2,
// bearer_token_file, tls_config, proxy_url, ...) and, of queue_config,
// max_samples_per_send, min_backoff, max_backoff and max_retries. It is
// read the way Prometheus reads it (strict YAML, relative file paths from
// the file's directory), so that a user copies the entry they already
// have.
type RemoteWriteConfig struct {
	URL              string                      `yaml:"url"`
	RemoteTimeout    model.Duration              `yaml:"remote_timeout,omitempty"`
	Headers          map[string]string           `yaml:"headers,omitempty"`
	HTTPClientConfig promconfig.HTTPClientConfig `yaml:",inline"`
	QueueConfig      QueueConfig                 `yaml:"queue_config,omitempty"`
}

// QueueConfig holds the keys of queue_config that a backfill uses.
type QueueConfig struct {
	MaxSamplesPerSend int            `yaml:"max_samples_per_send,omitempty"`
	MinBackoff        model.Duration `yaml:"min_backoff,omitempty"`
	MaxBackoff        model.Duration `yaml:"max_backoff,omitempty"`
	MaxRetries        int            `yaml:"max_retries,omitempty"`
}

// DefaultRemoteWriteConfig is what a key left out means. Batches are
// larger than Prometheus' live default (2 000): history comes in bulk,
// and 5 000 samples stay far below the request sizes receivers take.
func DefaultRemoteWriteConfig() RemoteWriteConfig {
	return RemoteWriteConfig{
		RemoteTimeout:    model.Duration(30 * time.Second),
		HTTPClientConfig: promconfig.DefaultHTTPClientConfig,
		QueueConfig: QueueConfig{MaxSamplesPerSend: 5000, MinBackoff: model.Duration(500 * time.Millisecond),
			MaxBackoff: model.Duration(30 * time.Second), MaxRetries: 10},
	}
}

// UnmarshalYAML fills the defaults of the keys left out.
func (c *RemoteWriteConfig) UnmarshalYAML(unmarshal func(any) error) error {
	*c = DefaultRemoteWriteConfig()
	type plain RemoteWriteConfig
	return unmarshal((*plain)(c))
}

// LoadRemoteWriteConfig reads a remote-write entry from a YAML file.
func LoadRemoteWriteConfig(file string) (*RemoteWriteConfig, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	c := DefaultRemoteWriteConfig()
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	c.HTTPClientConfig.SetDirectory(filepath.Dir(file))
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return &c, nil
}

// Validate checks the entry as Prometheus would.
func (c *RemoteWriteConfig) Validate() error {
	u, err := url.Parse(c.URL)
	switch {
	case c.URL == "":
		return errors.New("url: a remote-write URL is required")
	case err != nil:
		return fmt.Errorf("url: %w", err)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("url %q: want an http:// or https:// address", u.Redacted())
	case c.QueueConfig.MaxSamplesPerSend < 1:
		return errors.New("queue_config.max_samples_per_send: must be at least 1")
	case c.QueueConfig.MaxRetries < 0:
		return errors.New("queue_config.max_retries: must not be negative")
	case c.QueueConfig.MinBackoff <= 0 || c.QueueConfig.MaxBackoff < c.QueueConfig.MinBackoff:
		return errors.New("queue_config: min_backoff must be positive and at most max_backoff")
	case c.RemoteTimeout <= 0:
		return errors.New("remote_timeout: must be positive")
	}
	for name := range c.Headers {
		switch h := textproto.CanonicalMIMEHeaderKey(name); h {
		case "Content-Encoding", "Content-Type", "X-Prometheus-Remote-Write-Version", "User-Agent", "Authorization":
			return fmt.Errorf("headers: %s is set by the protocol or by the authorization keys, not here", h)
		}
	}
	return c.HTTPClientConfig.Validate()
}

// Build makes the client of the entry.
func (c *RemoteWriteConfig) Build() (*RemoteWrite, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	client, err := promconfig.NewClientFromConfig(c.HTTPClientConfig, "onchain_exporter_backfill")
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(c.URL)
	return &RemoteWrite{URL: c.URL, Redacted: u.Redacted(), Client: client, Headers: c.Headers,
		BatchSamples: c.QueueConfig.MaxSamplesPerSend, Timeout: time.Duration(c.RemoteTimeout),
		MinBackoff: time.Duration(c.QueueConfig.MinBackoff), MaxBackoff: time.Duration(c.QueueConfig.MaxBackoff),
		MaxRetries: c.QueueConfig.MaxRetries}, nil
}
