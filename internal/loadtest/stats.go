package loadtest

import (
	"slices"
	"time"
)

// Latency summarises call latencies in microseconds.
type Latency struct {
	P50 float64 `json:"p50Us"`
	P90 float64 `json:"p90Us"`
	P99 float64 `json:"p99Us"`
	Max float64 `json:"maxUs"`
}

// summarise sorts d in place and returns its percentiles (nearest rank).
func summarise(d []time.Duration) Latency {
	if len(d) == 0 {
		return Latency{}
	}
	slices.Sort(d)
	return Latency{P50: us(rank(d, 50)), P90: us(rank(d, 90)), P99: us(rank(d, 99)), Max: us(d[len(d)-1])}
}

// rank is the nearest-rank percentile p of the sorted d.
func rank(d []time.Duration, p int) time.Duration {
	i := (len(d)*p + 99) / 100 // ceil(n·p/100), 1-based
	return d[max(i, 1)-1]
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// median returns the median of xs (the mean of the middle two for an even
// count); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
