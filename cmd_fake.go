package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/onchain-exporter/onchain_exporter/demo"
	"github.com/onchain-exporter/onchain_exporter/fakeapi"
)

// fakeCommand is `onchain_exporter fake`: the project's fake upstream on
// its own, on a fixed address with fixed credentials, so that a
// configuration can be tried before it is pointed at the paid APIs. The
// exporter stays the default command: without a command name the
// arguments are the exporter's, as they always were.
type fakeCommand struct {
	chosen   bool
	listen   *string
	dialect  *string
	timeless *bool
}

// fakeDefaultAddress is where `onchain_exporter fake` listens unless told
// otherwise; examples/config-fake.yml points at it.
const fakeDefaultAddress = "127.0.0.1:9800"

// addFakeCommand adds the exporter (default) and fake commands to app.
func addFakeCommand(app *kingpin.Application) *fakeCommand {
	app.Command("exporter", "Run the exporter (the default command: the flags above are its own).").Default()
	f := &fakeCommand{}
	cmd := app.Command("fake", "Serve the fake upstream (all three APIs, generated data, the demo credentials) to try a configuration against; see examples/config-fake.yml.").
		Action(func(*kingpin.ParseContext) error { f.chosen = true; return nil })
	f.listen = cmd.Flag("fake.listen-address", "Address the fake upstream listens on.").Default(fakeDefaultAddress).String()
	f.dialect = cmd.Flag("fake.dialect", "Payload dialect of the fake Indicator and Analyst Consensus APIs: a or b (see fakeapi.Dialect).").
		Default("a").Envar(demo.DialectEnv).Enum("a", "b")
	f.timeless = cmd.Flag("fake.timeless", "Serve the Indicator and Analyst Consensus answers without any time (no date, timestamp, updated_at or as_of), as an API whose rows carry none.").
		Envar(demo.TimelessEnv).Bool()
	return f
}

// run serves the fake upstream until SIGINT or SIGTERM and returns the
// process's exit code. What to point a configuration at is printed on out.
func (f *fakeCommand) run(logger log.Logger, out io.Writer) int {
	dialect, err := fakeapi.ParseDialect(*f.dialect)
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the fake upstream", "err", err)
		return 2
	}
	d, err := demo.Listen(logger, *f.listen, demo.Payload{Dialect: dialect, Timeless: *f.timeless})
	if err != nil {
		level.Error(logger).Log("msg", "cannot start the fake upstream", "err", err)
		return 1
	}
	defer d.Close()
	fmt.Fprint(out, fakeBanner(d.URL))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	level.Info(logger).Log("msg", "fake upstream stopped")
	return 0
}

// fakeBanner says where each API of the fake is and which credential it
// takes. The credentials are the demo's, fixed and public: they open
// nothing but the fake.
func fakeBanner(url string) string {
	return fmt.Sprintf(`Fake upstream (generated data, not a real API). Point a configuration at it:
  data:       url: %[1]s            credential: %[2]s
  indicator:  url: %[1]s/indicator  credential: %[3]s
  consensus:  url: %[1]s/consensus  credential: %[4]s (premium plan)
Faults:  curl -X POST '%[1]s%[5]s?api=data&kind=Status500'   (kind=None clears)
Try:     ONCHAIN_DATA_TOKEN=%[2]s ONCHAIN_INDICATOR_KEY=%[3]s ONCHAIN_CONSENSUS_KEY=%[4]s \
           onchain_exporter --config.file=examples/config-fake.yml
`, url, demo.DataToken, demo.IndicatorToken, demo.ConsensusKey, demo.FaultPath)
}
