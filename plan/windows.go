package plan

import "time"

// WindowDuration is the spacing of a window's rows: day 24h, hour 1h,
// 10min 10m, min 1m. Block rows come with the chain's blocks, so block
// and unknown windows give 0.
func WindowDuration(window string) time.Duration {
	switch window {
	case "day":
		return 24 * time.Hour
	case "hour":
		return time.Hour
	case "10min":
		return 10 * time.Minute
	case "min":
		return time.Minute
	}
	return 0
}
